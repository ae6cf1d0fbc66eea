/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI between bpf/dump.bpf.c and agent/collect/dump.c (`boundprof dump`):
 * one record per thread of the process asked about, written by a task
 * iterator. Fixed-width types, explicit padding, appended to only.
 */
#ifndef BP_DUMP_REC_H
#define BP_DUMP_REC_H

#include "boundprof.h"

/*
 * Bytes of a thread's user stack copied from its stack pointer up. A
 * record must fit the iterator's seq buffer (8 pages, 32 KiB on x86-64)
 * with its kernel stack; 16 KiB held every native frame of the programs
 * tried (Python's interpreter loop keeps ~300 bytes a call, its Python
 * frames live on the heap and are read apart).
 */
#define BP_DUMP_USTACK		(16 * 1024)

/* bp_dump_rec.flags */
#define BP_DUMP_KTHREAD		1	/* a kernel thread: no user side */
#define BP_DUMP_REGS		2	/* regs[] hold its user registers */
#define BP_DUMP_FD		4	/* the syscall's first argument is an open fd: fd_* below */
#define BP_DUMP_SAMPLED		8	/* taken by a sample while it ran: registers, stacks exact */

/* running threads sampled at most (the rest keep their iterator record) */
#define BP_DUMP_SAMPLES		256

/* regs[]: the user registers a thread entered the kernel with */
enum bp_dump_reg {
	BP_DR_IP = 0,
	BP_DR_SP,
	BP_DR_BP,
	BP_DR_ORIG_AX,		/* the system call number (or an exception's error code) */
	BP_DR_DI,		/* its first three arguments */
	BP_DR_SI,
	BP_DR_DX,
	BP_DR_FSBASE,		/* the thread pointer: Python's thread state hangs off it */
	BP_DR__MAX,
};

struct bp_dump_rec {
	__u32 tgid;
	__u32 tid;
	__u32 state;		/* task __state (TASK_* bits) */
	__u32 on_cpu;		/* on a CPU right now */
	__u32 in_iowait;	/* blocked in io_schedule() */
	__u32 flags;		/* BP_DUMP_* */
	__u64 regs[BP_DR__MAX];
	/* the file behind the syscall's fd (BP_DUMP_FD) */
	__u64 fd_ino;		/* its inode number */
	__u64 peer_ino;		/* a connected Unix socket: the other end's inode */
	__u32 fd_dev;		/* its superblock's device, as the kernel encodes it */
	__u16 fd_mode;		/* i_mode */
	__u8 fd_kind;		/* enum bp_fd_kind */
	__u8 pad0;
	__u8 raddr[16];		/* an IPv4/IPv6 socket: the remote address (v4 first four) */
	__u16 rport;		/* ... and port, host order */
	__u16 lport;		/* our port, host order */
	__u16 family;
	__u16 pad1;
	__s32 kstack_len;	/* bytes of kstack[], or -errno */
	__s32 ustack_len;	/* bytes of ustack[] copied, or -errno */
	char comm[BP_COMM_LEN];
	__u64 kstack[BP_MAX_STACK_DEPTH];
	__u8 ustack[BP_DUMP_USTACK];
};

#endif /* BP_DUMP_REC_H */
