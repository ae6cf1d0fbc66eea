/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loader: opens the BPF skeleton, sizes its maps, loads and attaches the
 * programs (one sampling perf event per online CPU, the process tracepoints)
 * and tears everything down again.
 */
#ifndef BP_LOADER_H
#define BP_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/drainpol.h"
#include "boundprof.h"

struct boundprof_bpf;
struct ring_buffer;
struct bp_blockio;
struct bp_cg_target;

struct bp_loader_opts {
	int hz;			/* on-CPU sampling frequency */
	double drain_interval_s;	/* how often userspace drains the maps */
	bool filter;		/* profile only the targets and their new children */
	bool verbose_libbpf;	/* forward libbpf's debug output */
	bool no_blockio;	/* leave the block IO programs out */
	bool offcpu;		/* trace context switches: off-CPU and wall-clock time */
	int offcpu_ustacks;	/* user stacks at switch-out: 0 never, 1 targets, 2 always */
	bool no_preempt_stacks;	/* runqueue waits after preemption carry no stacks */
	const struct bp_cg_target *cgroup;	/* only tasks in this cgroup or below (-G) */
	uint32_t unwind_rows;	/* the unwind rows array (its memory budget / 8); 0: none */
	bool no_python;		/* no Python frames: the native walk alone */
	bool follow_peers;	/* add the local processes a command waits on (chain.h) */
	bool no_r;		/* no R frames */
	bool serial_load;	/* verify on one CPU: a slower start, a lower peak RSS */
	bool skip_self;		/* leave this process out of the profile */
	bool no_idle_samples;	/* no samples of idle CPUs (perf's exclude_idle) */
};

/* called for every process event the BPF side reports: a struct bp_exec_event for BP_EV_EXEC */
typedef void (*bp_event_fn)(void *ctx, const struct bp_event *ev, size_t size);
/* called for every record of the Python ring (bpf/python.h) */
typedef void (*bp_py_event_fn)(void *ctx, const void *rec, size_t len);

/* an LRU cache of the interpreter walkers, in slot 0 of its map of maps */
enum bp_interp_cache_id {
	BP_CACHE_PY_SEEN,	/* py_seen: code objects sent */
	BP_CACHE_R_SEEN,	/* r_seen: symbols and files sent */
	BP_CACHE_R_LOCS,	/* r_locs: locations read */
	BP_INTERP_CACHES,
};

struct bp_interp_cache {
	struct bpf_map *outer;
	const char *name;	/* the LRU's, as bpftool lists it */
	uint32_t key_size, value_size, max_entries;	/* the template's, kept from open */
	int fd;			/* -1 until its language's first process */
	uint64_t bytes;		/* kernel memory, fixed once made (preallocated) */
};

/* called for every totals record (struct bp_thr_rec, struct bp_proc_rec) */
typedef void (*bp_rec_fn)(void *ctx, const void *rec, size_t len);
/* called for every on-CPU sample of a drained buffer; 0 or -errno */
struct bp_oncpu_rec;
typedef int (*bp_sample_fn)(void *ctx, const struct bp_oncpu_rec *rec);

struct bp_loader {
	struct boundprof_bpf *skel;	/* its maps, and the interpreter caches below */
	struct boundprof_bpf *twin;	/* the programs verified on a second CPU (twinload.h) */
	bool serial_load;		/* no twin: bp_loader_opts.serial_load */
	struct ring_buffer *rb;
	int ncpus;		/* possible CPUs: per-CPU map value count */
	int nr_pe;
	int *pe_fds;
	struct bpf_link **pe_links;
	bool hw_cycles;		/* sampling the cycles PMU (else cpu-clock) */
	bool no_idle_samples;	/* bp_loader_opts.no_idle_samples */
	int hz;
	uint32_t counts_entries;
	uint32_t stack_entries;
	uint32_t off_entries;
	bool offcpu;
	bp_event_fn ev_fn;
	void *ev_ctx;
	bp_rec_fn rec_fn;	/* the exit records in the event ring go here */
	void *rec_ctx;
	struct bp_blockio *blockio;	/* NULL when block IO is not traced */
	uint32_t uw_rows;	/* rows unwind_rows may hold (1 when unwinding is off) */
	struct bp_interp_cache caches[BP_INTERP_CACHES];
	int stats_fd;		/* > 0 while we hold run-time stats on */
	bool py_walk;		/* the BPF side walks Python frames (not --no-python) */
	bool r_walk;		/* the BPF side walks R frames (not --no-r) */
	bp_py_event_fn py_fn;	/* set before attach: the Python ring's reader */
	void *py_ctx;
	struct ring_buffer *py_rb;	/* the Python ring, read at every poll and drain */
	/* the on-CPU sample slots and their counts, mapped (struct bp_oncpu_rec) */
	struct bp_oncpu_rec *smp_recs;
	struct bp_oncpu_fill *smp_fill;
	size_t smp_recs_len, smp_fill_len;
	uint32_t smp_slots;	/* per CPU and buffer */
	bp_sample_fn smp_fn;
	void *smp_ctx;
	int core_btf_fd;		/* until loaded: the relocation subset's memfd (corebtf.h) */
	char core_btf_path[32];		/* its /proc/self/fd path, for libbpf */
	uint32_t core_btf_types;	/* kernel types in it; 0: relocated against the whole */
	bool exit_walk;			/* bp_exit walks sampled processes' mappings (else bp_exit_nowalk) */
	/*
	 * Kernel memory of the maps (bp_loader__map_bytes()): the
	 * preallocated ones' is fixed, read once; the hash maps that grow
	 * as they fill are read at every call.
	 */
	bool maps_split;
	uint64_t fixed_map_bytes;
	int *grow_fds;
	int nr_grow;
	/* threads with a storage element of the tls map, at the last task walk */
	uint64_t tls_threads;
};

/* open, size and load the programs; *out is NULL on failure. 0 or -errno. */
int bp_loader__open(struct bp_loader **out, const struct bp_loader_opts *opts);

/* add a process to the target set (filter mode) */
int bp_loader__add_target(struct bp_loader *l, uint32_t tgid);

/* attach the tracepoints, the per-CPU perf events and the event ring buffer */
int bp_loader__attach(struct bp_loader *l, bp_event_fn fn, void *ctx);

/* deliver pending process events; waits up to timeout_ms. >=0 or -errno. */
int bp_loader__poll(struct bp_loader *l, int timeout_ms);

/*
 * Deliver what the Python ring holds now. A drain calls it right after the
 * flip: the code objects its Python stacks name were sent before it.
 */
void bp_loader__consume_py(struct bp_loader *l);

/*
 * Switch the programs to the other map buffer and wait until no program can
 * still be writing into the old one; returns the index of the buffer that is
 * now safe to drain (0 or 1).
 */
int bp_loader__flip(struct bp_loader *l);

/* the BPF side's cumulative row and sample counts: read from its .bss, no system call */
void bp_loader__pending(const struct bp_loader *l, struct bp_drain_pend *out);

/* the size of the maps each of those row counts is for (0: a map not created) */
void bp_loader__pend_entries(const struct bp_loader *l, uint32_t out[BP_PEND__MAX]);

/* the per-CPU counters summed over CPUs */
int bp_loader__stats(struct bp_loader *l, struct bp_stats *sum);

/*
 * Run the task iterator: it starts tracking threads not seen yet, closes
 * open off-CPU and on-CPU intervals up to now into the current buffer, and
 * reports each thread's and process's totals. 0 or -errno.
 */
int bp_loader__iterate(struct bp_loader *l, bp_rec_fn fn, void *ctx);

/*
 * Where the totals of threads and processes that exit go: records in the
 * event ring, handed over as bp_loader__poll() reads it.
 */
void bp_loader__set_rec_fn(struct bp_loader *l, bp_rec_fn fn, void *ctx);

/* a kernel address range whose frames say what a blocked thread waits in */
struct bp_site_range {
	uint64_t lo, hi;
	uint32_t site;		/* enum bp_wsite */
};

/*
 * The wait-site ranges (kernel lock slow paths, pipe, socket and poll
 * waits), sorted by address and disjoint; the BPF side keeps 64. 0, or
 * -EINVAL when they overlap or are out of order.
 */
int bp_loader__set_site_ranges(struct bp_loader *l, const struct bp_site_range *r, uint32_t n);

/* where bp_loader__drain_samples() hands the samples */
void bp_loader__set_sample_fn(struct bp_loader *l, bp_sample_fn fn, void *ctx);
/*
 * The on-CPU samples in buffer idx's slots, once it is flipped out
 * (bp_loader__flip()): to the sample function, each once. 0 or -errno.
 */
int bp_loader__drain_samples(struct bp_loader *l, int idx);
/* file descriptors of the buffer idx's maps */
int bp_loader__oncpu_fd(struct bp_loader *l, int idx);
int bp_loader__off_fd(struct bp_loader *l, int idx);
int bp_loader__wake_fd(struct bp_loader *l, int idx);
int bp_loader__net_fd(struct bp_loader *l, int idx);
/* the stacks of buffer idx: kernel or user, short (struct bp_stack_short) or not */
int bp_loader__stacks_fd(struct bp_loader *l, int idx, bool user, bool shrt);
int bp_loader__pystacks_fd(struct bp_loader *l, int idx);
/* py_procs: the CPython processes the on-CPU program walks (bpf/python.h) */
int bp_loader__py_procs_fd(struct bp_loader *l);
/*
 * before the first Python (r false) or R process is handed to BPF: the
 * interpreter ring mapped, that language's caches made; 0 / -errno
 */
int bp_loader__open_interp(struct bp_loader *l, bool r);
/* r_procs: the R processes the on-CPU program walks (bpf/rlang.h) */
int bp_loader__r_procs_fd(struct bp_loader *l);
/* after a process was added to py_procs or r_procs: what BPF remembered as none is stale */
void bp_loader__interp_added(struct bp_loader *l);
/* after unwind rows were written: the rows BPF kept per CPU may be stale */
void bp_loader__unwind_rows_written(struct bp_loader *l);

/* the unwind maps: rows (an array) and per-process mappings (a hash) */
int bp_loader__unwind_rows_fd(struct bp_loader *l);
int bp_loader__unwind_procs_fd(struct bp_loader *l);
int bp_loader__unwind_files_fd(struct bp_loader *l);

/*
 * kernel memory of the skeleton's maps, the interpreter caches and the
 * threads' storage (not the unwind rows' chunks: unwind.h)
 */
uint64_t bp_loader__map_bytes(struct bp_loader *l);

/* ... of the map behind fd */
uint64_t bp_loader__fd_map_bytes(int fd);

/*
 * Of bp_loader__map_bytes(): the threads' storage elements (the tls map),
 * which the kernel's charge for that map leaves out, as the threads the
 * last task walk found times the slab object each element takes.
 */
uint64_t bp_loader__thread_storage_bytes(const struct bp_loader *l);

/* the slab object the kernel's kmalloc() gives for n bytes (x86-64, 4 KiB pages) */
uint64_t bp_loader__slab_bytes(uint64_t n);

/*
 * Have the kernel count the programs' run time for as long as the loader
 * lives (BPF_ENABLE_STATS: it stops by itself when we exit). 0 or -errno.
 */
int bp_loader__count_run_time(struct bp_loader *l);

/* a loaded program's run time and runs since it was loaded, as the kernel counts them */
struct bp_prog_run {
	char name[48];		/* bpf_program__name() */
	uint64_t ns;
	uint64_t runs;
};

/* more than one session loads: 21 sections, each loaded by the skeleton or its twin */
#define BP_PROG_RUNS_MAX	64

/*
 * Every loaded program's counts into runs (at most max): how many, or
 * -ENODATA when the kernel does not count them (bp_loader__count_run_time()
 * not called and kernel.bpf_stats_enabled 0).
 */
int bp_loader__prog_runs(struct bp_loader *l, struct bp_prog_run *runs, int max);
/* one program's run time and runs, as counted: 0, or -errno (-ENODATA when not counted) */
int bp_loader__prog_run(struct bp_loader *l, const char *name, uint64_t *ns, uint64_t *runs);

/* each program's runs and time per run, at debug level, when the kernel counts them */
void bp_loader__log_run_stats(struct bp_loader *l);

void bp_loader__free(struct bp_loader *l);

/*
 * The oldest kernel the BPF programs load on, and the oldest tested (make
 * test-kernels): 6.1, the first whose verifier lets a perf_event program
 * use hash maps that allocate an element as they fill (BPF_F_NO_PREALLOC:
 * the unwind lists, stacks, processes seen). Before it, bpf_loop() (the
 * user stack walker, 5.17) set the floor; docs/kernels.md has the list of
 * features and versions.
 */
#define BP_KERNEL_MIN_MAJOR	6
#define BP_KERNEL_MIN_MINOR	1

/* whether a uname release ("6.1.0-57-cloud-amd64") is major.minor or later: 1, 0 or -EINVAL */
int bp_kernel_at_least(const char *release, int major, int minor);

/* kernel facts the command line checks before loading anything */
bool bp_kernel_has_btf(void);
/* 0 when we may load BPF and open perf events, else -EPERM */
int bp_check_privileges(void);
int bp_max_sample_rate(void);

#endif /* BP_LOADER_H */
