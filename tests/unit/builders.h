/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Profiles for unit tests, built through the profile's own interning
 * (model/profile.h) and checked with cmocka asserts: a failed step fails the
 * test that called it. Linked into every unit test.
 */
#ifndef BP_TEST_BUILDERS_H
#define BP_TEST_BUILDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* an empty window from start_ns, dur_ns long, of a 2-CPU machine busy that much, 99 Hz, off-CPU on */
struct bp_profile *bld_window(uint64_t start_ns, uint64_t dur_ns, double machine_busy);

/* the id of a frame (strings need not be interned; NULL name: unknown function) */
uint32_t bld_frame(struct bp_profile *p, const char *name, const char *module, const char *path,
		   const char *build_id, uint64_t off, bool kernel);

/* the id of a stack of these frame ids, root first */
uint32_t bld_stack(struct bp_profile *p, const uint32_t *frames, uint32_t n);
#define BLD_STACK(p, ...)							\
	bld_stack(p, (uint32_t[]){ __VA_ARGS__ },				\
		  sizeof((uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t))

/* add count / ns to the sample (pid, tid, kind, stack) */
void bld_sample(struct bp_profile *p, uint32_t pid, uint32_t tid, enum bp_kind kind,
		uint32_t stack, uint64_t count, uint64_t ns);

/* a process with its comm; cmdline interned, and with it have_meta (NULL: neither) */
struct bp_proc *bld_proc(struct bp_profile *p, uint32_t pid, uint32_t ppid, const char *comm,
			 const char *cmdline);

/* a thread with exact totals from context switches and a wakeup histogram, all from seed */
struct bp_thread *bld_thread(struct bp_proc *pr, uint32_t tid, const char *comm, uint64_t oncpu,
			     uint64_t seed);

/* block IO statistics of ops requests, the rest from seed */
void bld_io_stats(struct bp_io_stats *st, uint64_t ops, uint64_t seed);

/*
 * Three recorded processes and a sleeper: on-CPU and off-CPU samples of
 * every kind, kernel, unnamed and oddly named frames, bytes that are not
 * UTF-8, block IO on two devices, counters, memory and PMU evidence.
 */
struct bp_profile *rich_profile(void);

/* every field of struct bp_profile equal, ids included (doubles bit for bit) */
void assert_profile_eq(const struct bp_profile *a, const struct bp_profile *b);

/* the JSON report with verdicts, as `boundprof record --json` renders it; free() it */
char *json_report(const struct bp_profile *p);

/*
 * Fake /proc and /sys trees: a new directory /tmp/bp-NAME-XXXXXX into root
 * (at least 64 bytes), files written under it with their directories, and
 * the whole tree removed again (root emptied; an empty root is a no-op).
 */
void bld_tree_make(char *root, size_t len, const char *name);
void bld_tree_put(const char *root, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void bld_tree_remove(char *root);

#endif /* BP_TEST_BUILDERS_H */
