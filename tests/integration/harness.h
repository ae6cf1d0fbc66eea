/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Integration test harness: run boundprof and fixtures as real processes,
 * capture their output, and clean up whatever they leave even when a test
 * fails.
 */
#ifndef BP_HARNESS_H
#define BP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/json.h"

struct run {
	int status;		/* raw wait status */
	int exit_code;		/* WEXITSTATUS, or 128 + signal */
	bool signaled;
	char *out;		/* captured stdout, NUL-terminated */
	char *err;		/* captured stderr */
	size_t out_len, err_len;
};

/* environment the Makefile passes */
const char *h_bin(void);			/* ./boundprof */
const char *h_fixture(const char *name);	/* path of a fixture binary (static buffer) */

/* a fresh temporary directory for one test, removed by h_cleanup() */
const char *h_tmpdir(void);
/* path inside the test's temporary directory (static rotating buffers) */
const char *h_path(const char *name);
/*
 * A sysfs tree (for BOUNDPROF_SYSFS_ROOT) named name under the test's
 * directory, whose cpu0 has L1 and L2 caches and a unified L3 of mib MiB:
 * another machine's cache layout, or this one's made certain.
 */
const char *h_fake_sysfs(const char *name, unsigned int mib);

/* run argv to completion (timeout_s: SIGKILL after), capturing output */
int h_run(char *const argv[], double timeout_s, struct run *r);
void h_run_free(struct run *r);

/* start argv in the background with stdout captured on *out_fd (or -1) */
pid_t h_spawn(char *const argv[], int *out_fd);
/* the same, with stderr captured on *err_fd too */
pid_t h_spawn2(char *const argv[], int *out_fd, int *err_fd);
/* read a line from fd within timeout_s; 0 or -ETIMEDOUT */
int h_read_line(int fd, char *buf, size_t len, double timeout_s);
/* wait for a background process (timeout_s, then SIGKILL) and fill r */
int h_wait(pid_t pid, int out_fd, int err_fd, double timeout_s, struct run *r);

/* a process the test forked itself (own process group): killed by h_cleanup() too */
void h_adopt(pid_t pid);

/* kill and reap every background process, remove the temporary directory */
void h_cleanup(void);

/* read a whole file (malloc()ed), NULL if missing */
char *h_slurp(const char *path, size_t *len);
/* parse a JSON file; NULL (and a printed reason) on failure */
struct bp_json *h_json_file(const char *path);

/*
 * `boundprof record -o NAME -- COMMAND...` (NAME under the test directory,
 * a .json), which must exit 0; the parsed report, or NULL with the reason
 * (and the run's output) printed.
 */
struct bp_json *h_record_json(const char *name, char *const cmd[]);
/* the same, with record's options (NULL-ended; NULL for none) before -o */
struct bp_json *h_record_json_opts(const char *name, char *const opts[], char *const cmd[]);

/* the process object in a report with this comm, or NULL */
const struct bp_json *h_find_proc(const struct bp_json *report, const char *comm);
/* boundprof's verdict for a process, its evidence, levers and the counts it came from, on stderr */
void h_show_verdict(const char *what, const struct bp_json *proc);
/* a line of the process's verdict evidence contains needle */
bool h_evidence_has(const struct bp_json *proc, const char *needle);
/* the "self" fraction of a function among a process's hotspots, or -1 */
double h_hotspot_self(const struct bp_json *proc, const char *function);

/* count lines in a string */
int h_lines(const char *s);

/* cmd is an executable on PATH */
bool h_have(const char *cmd);

/* the rows of `go tool pprof -top` output, after its header */
struct h_top_row {
	char name[128];
	double flat_pct;
};
int h_pprof_top(const char *out, struct h_top_row *rows, int max);

/*
 * One HTTP exchange with 127.0.0.1:port: raw request bytes sent as they are
 * (so that tests can send malformed ones), the answer read until the server
 * closes. *status is the status code (-1: no status line); *body (malloc()ed,
 * NUL-terminated, may be NULL) and *body_len what follows the header. 0 or
 * -errno (-ETIMEDOUT).
 */
int h_http(int port, const char *request, size_t req_len, double timeout_s, int *status,
	   char **body, size_t *body_len);
/* GET path with Connection: close; same results */
int h_http_get(int port, const char *path, double timeout_s, int *status, char **body,
	       size_t *body_len);

/* skip the whole suite (loudly) unless we are root */
bool h_need_root(void);

/* seconds on the monotonic clock */
double h_now(void);
void h_sleep(double s);

/*
 * Wait (up to timeout_s) until `boundprof record` (pid) samples every CPU:
 * it has opened one perf event per online CPU, which it does after the
 * tracepoints that follow processes are attached. 0 or -ETIMEDOUT.
 */
int h_wait_recording(pid_t pid, double timeout_s);

/* --------------------------------------------------------------- oracles */

/*
 * The kernel's count of a fixture's time (tests/fixtures/fixture.h): the
 * fixtures append a line to the file BP_FIXTURE_SCHED names, which
 * h_sched_arm() points at a fresh file in the test's directory (in this
 * process's environment: boundprof passes it on to the command). Seconds;
 * thread-seconds summed over the fixture's threads, each from the start of
 * its work to its end (pre_*: what came before, fork and exec included).
 * wall - on - rq is the time the threads were blocked, and the time the
 * hypervisor took while they ran (steal: the kernel leaves it out of on);
 * runs how many times they were switched in.
 */
struct h_sched {
	int pid;
	char comm[32];
	int threads;
	double wall, on, rq, runs, pre_on, pre_rq;
	double steal;	/* the machine's, all CPUs, over the fixture's life */
};

/* true when the kernel keeps schedstat (else: skip, loudly) */
bool h_have_schedstat(void);
void h_sched_arm(void);
/* the lines of processes named comm written since h_sched_arm(); how many */
int h_sched_read(const char *comm, struct h_sched *out, int max);

/*
 * A process's busy thread-time as the kernel split it, in seconds: on-CPU,
 * run queue, blocked on IO, blocked on locks. What part of the on-CPU time
 * was spent submitting IO (which the classifier counts as IO) is known only
 * to lie between io_cpu_lo and io_cpu_hi (fractions). rq_extra: how much
 * of the kernel's on-CPU time boundprof may rightly count as run queue
 * (H_WAKEUP_S per switch-in).
 */
struct h_busy {
	double on, rq, io, lock;
	double io_cpu_lo, io_cpu_hi;
	double rq_extra;
};

/*
 * A woken thread that preempts (an idle CPU, or a task with less claim)
 * has its run clock started at the wakeup: the scheduler skips the clock
 * update of the switch that follows. So the kernel counts the moments from
 * a wakeup to the switch (the interrupt's exit, the CPU leaving idle) as
 * on-CPU time, boundprof, which times the switch itself, as waiting for the
 * CPU. Those moments are microseconds (2-6 us measured in a Firecracker
 * guest); a process waking 10,000 times a second moves a few percent of
 * its time from one to the other. This is the allowance per switch-in.
 */
#define H_WAKEUP_S 10e-6

/*
 * A process that only waits for IO: its IO and run-queue time against the
 * kernel's blocked time and run delay. Together they are the kernel's
 * blocked and runnable time (within H_WAKEUP_S per run); IO is never more
 * than blocked, the run queue never less than the run delay, and most of
 * the wait is IO. The split between them moves: from the wakeup
 * (sched_waking) to the enqueue is blocked to the kernel and the run queue
 * to us, and a wakeup's IPI to a vCPU the host is not running takes a while.
 * Steal: boundprof counts the time the hypervisor took while a thread ran as
 * on-CPU and says how much it was (steal_s), the kernel leaves it out of
 * on-CPU time, so the kernel's blocked time holds it. boundprof's figure is
 * checked first: no more than the machine's steal over the fixture's life
 * (10 ms a tick of slack), and on-CPU minus it the kernel's on-CPU time.
 * Reads off_cpu_s.io, off_cpu_s.runqueue, on_cpu_s and steal_s of @proc.
 */
bool h_io_rq_split(const char *who, const struct h_sched *k, const struct bp_json *proc);

/* busy time of a fixture that blocks only on `blocked` (NULL: only sleeps) */
struct h_busy h_busy_of(const struct h_sched *k, const char *blocked);

/*
 * How far boundprof's shares of busy time may lie from the kernel's: the
 * two count the same scheduler events, but over spans that differ at the
 * edges (boundprof from fork to exit, a fixture from main() to its report
 * with what came before kept apart; a program's own report from the start
 * to the end of its work), and boundprof sorts blocked time into classes
 * the kernel does not tell apart (a barrier's futex wait is sleep to one,
 * a fault on the binary IO to the other); under CPU contention boundprof's
 * count of a thread falls short of the kernel's by up to a percent or two.
 * 0.05 of busy time is 0.2 s of such differences in a 4-s run, where the
 * edges are milliseconds; it is also the classifier's own borderline
 * (docs/classification.md).
 */
#define H_SHARE_MARGIN 0.05

/*
 * boundprof's count of a time (on-CPU, run queue, blocked) agrees with the
 * kernel's for the same span: within 5% of it (the precision the accounting
 * claims, as accounted_s against wall_s), 10 ms for the span's edges (exec,
 * exit), and `less` seconds less or `more` seconds more. On-CPU time may be
 * runs * H_WAKEUP_S less and run-queue time as much more (the moments the
 * kernel charges to a woken thread before it runs). Time blocked may be
 * runs * H_WAKEUP_S off either way: both stamp the end of a wait at its
 * wakeup, with different clocks (the run queue's, the tracepoint's) that a
 * busy machine lets drift apart by microseconds a wakeup (+3 to -8 us seen
 * under load). Prints both.
 */
bool h_near_kernel(const char *what, double got, double kernel, double less, double more);

/*
 * The classes docs/classification.md's rules give for this busy time, each
 * share moved by up to H_SHARE_MARGIN either way and the IO-submission part
 * anywhere in its range; `compute` is the class of a compute verdict for the
 * workload (cpu-bound, memory-bandwidth-bound). Prints the shares; fills
 * classes (up to max) and returns how many. The thresholds are the
 * documented ones, written here: the oracle is not the code it checks.
 */
int h_verdict_classes(const struct h_busy *b, const char *compute, const char **classes,
		      int max);
/* fail unless got is one of the classes h_verdict_classes() allows */
void h_expect_class(const char *what, const char *got, const struct h_busy *b,
		    const char *compute);

/*
 * The kernel's count of a running process, sampled by the test: its CPU
 * clock (exact: the scheduler's runtime of all its threads) and the sum of
 * its threads' run-queue waits (schedstat), read between CLOCK_REALTIME t_lo
 * and t_hi (seconds, the clock boundprof's start_unix_ns is on). Samples
 * bracket: what the process had at a moment between two samples lies
 * between their counts.
 */
struct h_psample {
	double t_lo, t_hi, cpu, rq;
	int threads;
};
int h_sample_proc(pid_t pid, struct h_psample *s);
/* the bracket [lo, hi] on the CPU time a process had in [t0, t1] (NAN if not covered) */
void h_cpu_between(const struct h_psample *s, int n, double t0, double t1, double *lo,
		   double *hi);

#endif /* BP_HARNESS_H */
