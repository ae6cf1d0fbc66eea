/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `boundprof dump -p PID`: every thread of one living process as it is
 * now: its state, its stack (kernel, native and Python frames, named as
 * everywhere else) and what it waits on: the wait class, the kernel
 * function it waits in, the file of its system call, and the process at
 * the other end of a pipe or Unix socket. A BPF task iterator takes the
 * snapshot (bpf/dump.bpf.c); this module unwinds and names it.
 * docs/dump.md has the method and its limits.
 */
#ifndef BP_COLLECT_DUMP_H
#define BP_COLLECT_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "boundprof.h"

struct bp_profile;

/* what a thread is doing, as ps(1) would say it */
enum bp_dump_state {
	BP_DS_RUNNING = 0,	/* on a CPU */
	BP_DS_RUNNABLE,		/* runnable, waiting for a CPU */
	BP_DS_SLEEPING,		/* interruptible wait (S) */
	BP_DS_DISK,		/* uninterruptible wait (D) */
	BP_DS_STOPPED,		/* stopped or traced (T, t) */
	BP_DS_ZOMBIE,		/* exited, not reaped (Z, X) */
	BP_DS__MAX,
};

/* the other end of a pipe, a Unix socket or a TCP connection on this host */
struct bp_dump_peer {
	uint32_t pid;		/* 0: none found */
	char comm[BP_COMM_LEN];
	uint32_t fd;		/* its fd on the same pipe or socket */
};

struct bp_dump_thread {
	uint32_t tid;
	char comm[BP_COMM_LEN];
	uint8_t state;		/* enum bp_dump_state */
	uint8_t wait_class;	/* enum bp_tstate (wait_classes.h); RUNNING while on a CPU */
	uint8_t site;		/* enum bp_wsite the kernel stack names */
	uint8_t dir;		/* enum bp_dir of the wait */
	bool pending;		/* a poll/select/epoll wait: its class is what will end it */
	bool gil;		/* waiting for its Python interpreter's GIL */
	bool stale_regs;	/* on a CPU: its user registers are from its last kernel entry */
	bool user_cut;		/* the native unwind stopped before the outermost frame */
	const char *wait_func;	/* the kernel function it waits in, or NULL */
	int64_t syscall;	/* system call number, -1: not in one */
	uint64_t args[3];
	int32_t fd;		/* the fd the system call names, -1: none */
	uint8_t fd_kind;	/* enum bp_fd_kind */
	char *fd_path;		/* its path (/proc/PID/fd/N), or NULL */
	char *remote;		/* an IPv4/IPv6 socket's remote "address:port", or NULL */
	struct bp_dump_peer peer;
	/* frames (bp_dump.prof), innermost first: kernel, then user (native and Python) */
	uint32_t *frames;
	uint32_t nr_frames;
	uint32_t nr_kernel;	/* of them, the first nr_kernel are the kernel's */
	/*
	 * the native unwind alone, innermost first: one frame per address
	 * (the function, not what was inlined into it), interpreter loops kept
	 */
	uint32_t *native;
	/* ... and the address each was found at, in module terms (symbols.h), a
	 * return address one byte back: what addr2line -e MODULE takes */
	uint64_t *native_at;
	uint32_t nr_native;
};

struct bp_dump {
	uint32_t pid;
	char comm[BP_COMM_LEN];
	char *cmdline;
	char python[24];	/* "3.11.2" when its Python frames were walked, "" else */
	struct bp_dump_thread *threads;	/* by tid */
	uint32_t nr_threads;
	struct bp_profile *prof;	/* the frames */
	uint64_t taken_ns;		/* CLOCK_REALTIME of the snapshot */
};

/*
 * Take the snapshot: 0, or -ESRCH (no such process), -EPERM / -EACCES (the
 * caller may not read its memory: it could not ptrace it), -ENOTSUP (the
 * kernel lacks what it needs), -errno; each logged once with what to do.
 */
int bp_dump__take(pid_t pid, struct bp_dump **out);
void bp_dump__free(struct bp_dump *d);

/* "running", "runnable", "sleeping", "disk", "stopped", "zombie" */
const char *bp_dump_state_name(uint8_t state);

#endif /* BP_COLLECT_DUMP_H */
