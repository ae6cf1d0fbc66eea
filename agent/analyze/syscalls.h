/* SPDX-License-Identifier: GPL-2.0 */
/*
 * System calls by number, as the on-CPU samples record them (the number
 * the thread's saved registers hold; x86-64 numbering). The table names
 * the common calls; others print as "syscall N".
 */
#ifndef BP_ANALYZE_SYSCALLS_H
#define BP_ANALYZE_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>

/* the name of x86-64 system call nr, or NULL when the table has none */
const char *bp_syscall_name(uint32_t nr);

/* "read", or "syscall 999" for a number the table lacks; returns buf */
const char *bp_syscall_label(uint32_t nr, char *buf, size_t len);

#endif /* BP_ANALYZE_SYSCALLS_H */
