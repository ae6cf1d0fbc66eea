/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python processes: finding a CPython interpreter in a process when it is
 * first seen (by its files' symbols and version), telling the BPF walker
 * where that interpreter keeps its thread states and frames, keeping the
 * code objects the walker copies, and turning a sampled Python stack into
 * frames merged with the native ones (docs/python.md).
 */
#ifndef BP_COLLECT_PYTHON_H
#define BP_COLLECT_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "boundprof.h"

struct bp_loader;
struct bp_profile;
struct bp_python;

struct bp_python_stats {
	uint64_t attached;		/* interpreters found and handed to the walker */
	uint64_t unsupported;		/* interpreters of a version or build we do not know */
	uint64_t code_events;		/* code objects received */
	uint64_t code_events_bad;	/* records that were not well-formed */
	uint64_t code_refetched;	/* line tables read again from the living process */
	uint64_t code_dropped;		/* not kept: the per-process bound */
	uint64_t frames_unread;		/* Python frames whose code object we never got */
	uint64_t loader_waits;		/* processes looked at again: libpython or libc not mapped yet */
	uint64_t loader_timeouts;	/* ... given up on after BP_LOADWAIT_NS */
};

/* l NULL: no BPF walker (boundprof dump walks from userspace, bp_python__walk()) */
struct bp_python *bp_python__new(struct bp_loader *l, const char *proc_root);
void bp_python__free(struct bp_python *py);

/*
 * Look at a process (at its first sample, exec, or the start) and, if it
 * runs a CPython we know, start walking its Python frames. Cheap when the
 * process was looked at already. 0, or -errno for a failure worth logging.
 */
int bp_python__attach(struct bp_python *py, pid_t pid);

/* a new image: everything known about the process is forgotten */
void bp_python__exec(struct bp_python *py, pid_t pid);
/* pid runs a Python whose frames are walked (or are being looked for) */
bool bp_python__walks(struct bp_python *py, pid_t pid);
/* the process exited: keep its code objects for the samples still to drain */
void bp_python__exited(struct bp_python *py, pid_t pid);
/* once a window: drop processes that had exited at the previous call */
void bp_python__retire(struct bp_python *py);
/* at each drain: retry what was not ready (an interpreter still starting) */
void bp_python__tick(struct bp_python *py);
/* a process waits for its loader to map the interpreter: tick soon, not at the next drain */
bool bp_python__waiting(const struct bp_python *py);

/* one record of the Python ring (bpf/python.h) */
void bp_python__on_event(void *ctx, const void *rec, size_t len);

/* frame ids are per profile: forget those of the previous one */
void bp_python__set_profile(struct bp_python *py, struct bp_profile *prof);
/* the frame cache lasts one drain (a code object's address can be reused) */
void bp_python__drain_done(struct bp_python *py);

/*
 * The user part of a stack, root first: the native frames nat[0..nn) with
 * the Python stack ps merged in, each run of Python frames in place of the
 * interpreter-loop frame that ran it (runs the native walk did not reach go
 * at the root). Written to out (room for max ids); the count, or -errno.
 */
int bp_python__merge(struct bp_python *py, uint32_t pid, const struct bp_stack *ps,
		     const uint32_t *nat, uint32_t nn, uint32_t *out, uint32_t max);

/*
 * Walk one thread's Python frames now, from userspace, the way the BPF
 * side does (bpf/python.bpf.h): fsbase is the thread's thread pointer, as
 * the kernel holds it; everything else is read from the living process
 * (process_vm_readv: only what the caller may read), and each new code
 * object with it. *ps as the BPF side would make it; nr 0 when the thread
 * runs no Python. 0, or -errno (-ESRCH: the thread state is another's).
 */
int bp_python__walk(struct bp_python *py, pid_t pid, pid_t tid, uint64_t fsbase,
		    struct bp_stack *ps);

/* the interpreter's GIL state [lo, hi) in the process; 0, 0 unknown */
void bp_python__gil(const struct bp_python *py, pid_t pid, uint64_t *lo, uint64_t *hi);

/* "3.11.2" for an attached process, NULL otherwise */
const char *bp_python__version(struct bp_python *py, pid_t pid, bool *free_threaded);

const struct bp_python_stats *bp_python__stats(const struct bp_python *py);

#endif /* BP_COLLECT_PYTHON_H */
