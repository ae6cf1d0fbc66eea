// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <linux/capability.h>
#include <linux/membarrier.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collect/blockio.h"
#include "boundprof.skel.h"
#include "collect/corebtf.h"
#include "collect/cpus.h"
#include "collect/kbtf.h"
#include "collect/loader.h"
#include "collect/twinload.h"
#include "proc/cgroup.h"
#include "proc/procinfo.h"
#include "collect/unwind.h"
#include "util/log.h"


static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	size_t n;

	if (level == LIBBPF_DEBUG && !libbpf_verbose)
		return 0;
	/* verifier logs run to megabytes: no fixed buffer */
	if (vasprintf(&msg, fmt, ap) < 0)
		return 0;
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	/* libbpf's own failures are detail; we log one line for each failure */
	bp_dbg("libbpf: %s", msg);
	free(msg);
	return 0;
}

int bp_kernel_at_least(const char *release, int major, int minor)
{
	int maj, min;

	if (!release || sscanf(release, "%d.%d", &maj, &min) != 2 || maj < 0 || min < 0)
		return -EINVAL;
	return maj > major || (maj == major && min >= minor);
}

/*
 * How often a kernel thread's reused off-CPU stacks are walked again to
 * check them (bpf/offcpu.bpf.c, ksite_check): every 64th reuse, or every
 * N-th from BOUNDPROF_KSITE_CHECK (the tests check every one).
 */
static __u32 ksite_check(void)
{
	const char *v = getenv("BOUNDPROF_KSITE_CHECK");
	char *end;
	unsigned long n;

	if (!v || !*v)
		return 64;
	n = strtoul(v, &end, 10);
	if (*end || !n || n > 1u << 20) {
		bp_warn("BOUNDPROF_KSITE_CHECK=%s is not a count from 1 to %u: 64 used", v, 1u << 20);
		return 64;
	}
	return (__u32)n;
}

/*
 * Whether sched_switch passes prev_state (5.18+, bpf/compat.bpf.h): then its
 * prototype in the kernel's BTF, btf_trace_sched_switch, is (void *ctx, bool
 * preempt, prev, next, prev_state). Anything unexpected (no BTF read): assume
 * a current kernel, whose verifier will say so.
 */
static bool switch_has_prev_state(const struct bp_kbtf *kb)
{
	const struct btf_type *t = NULL;
	int id;

	if (!kb)
		return true;
	id = bp_kbtf__find(kb, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	if (id > 0)
		t = bp_kbtf__type(kb, bp_kbtf__type(kb, id)->type);
	if (t && btf_is_ptr(t))
		t = bp_kbtf__type(kb, t->type);
	if (t && btf_is_func_proto(t))
		return btf_vlen(t) >= 5;
	return true;
}

/* the byte offset of member name in the struct type id; -1 when absent */
static long member_offset(const struct bp_kbtf *kb, int id, const char *name)
{
	const struct btf_type *t = bp_kbtf__type(kb, id);
	const struct btf_member *m;
	int i;

	if (!t || !btf_is_struct(t))
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(bp_kbtf__name(kb, m->name_off), name))
			return btf_member_bit_offset(t, i) / 8;
	return -1;
}

/*
 * Where the running CPU's preempt count is, relative to its run queue:
 * per-CPU variables keep their offsets of the .data..percpu section in
 * every CPU's copy (the kernel's BTF lists them), and the BPF side reaches
 * the run queue through the current task. The count is __preempt_count
 * (and from 6.2 to 6.14 a member of pcpu_hot). 0: not found.
 */
static int64_t preempt_from_rq(const struct bp_kbtf *kb)
{
	long rq = -1, pc = -1, hot = -1;
	int id, i, j;

	if (!kb)
		return 0;
	id = bp_kbtf__find(kb, ".data..percpu", BTF_KIND_DATASEC);
	if (id > 0) {
		const struct btf_type *t = bp_kbtf__type(kb, id);
		const struct btf_var_secinfo *v = btf_var_secinfos(t);

		for (i = 0; i < btf_vlen(t); i++, v++) {
			const struct btf_type *var = bp_kbtf__type(kb, v->type);
			const char *name = var ? bp_kbtf__name(kb, var->name_off) : "";

			if (!strcmp(name, "runqueues"))
				rq = v->offset;
			else if (!strcmp(name, "__preempt_count"))
				pc = v->offset;
			else if (!strcmp(name, "pcpu_hot") &&
				 (j = member_offset(kb, var->type, "preempt_count")) >= 0)
				hot = v->offset + j;
		}
	}
	if (pc < 0)
		pc = hot;
	return rq >= 0 && pc >= 0 ? (int64_t)pc - rq : 0;
}

/* a value of the kernel's enum cgroup_subsys_id (the v1 filter's css_set::subsys[] index) */
static int cgroup_ssid(const struct bp_kbtf *kb, const char *name)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i, ssid = -ENOENT;

	if (!kb)
		return -ENOENT;
	id = bp_kbtf__find(kb, "cgroup_subsys_id", BTF_KIND_ENUM);
	t = id > 0 ? bp_kbtf__type(kb, id) : NULL;
	for (i = 0, e = t ? btf_enum(t) : NULL; t && i < btf_vlen(t); i++, e++)
		if (!strcmp(bp_kbtf__name(kb, e->name_off), name))
			ssid = e->val;
	return ssid;
}

bool bp_kernel_has_btf(void)
{
	return access(BP_KBTF_PATH, R_OK) == 0;
}

int bp_check_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	eff = (uint64_t)data[1].effective << 32 | data[0].effective;
#define HAS(c) (eff & (1ULL << (c)))
	if (HAS(CAP_SYS_ADMIN))
		return 0;
	if (HAS(39 /* CAP_BPF */) && HAS(38 /* CAP_PERFMON */))
		return 0;
#undef HAS
	return -EPERM;
}

int bp_max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	int rate = 100000;

	if (f) {
		if (fscanf(f, "%d", &rate) != 1 || rate <= 0)
			rate = 100000;
		fclose(f);
	}
	return rate;
}

static uint32_t pow2_at_least(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1U << 30))
		p <<= 1;
	return p;
}

static uint32_t clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/* no_idle: the program does not run for a sample of an idle CPU */
static int perf_open(int cpu, int hz, bool cycles, bool no_idle)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
		.exclude_idle = no_idle,
	};
	int fd;

	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* a guest without a virtual PMU has no cycles event: fall back to cpu-clock */
static bool have_cycles(int cpu, int hz)
{
	int fd = perf_open(cpu, hz, true, false);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* the objects whose programs are loaded: the skeleton's, then its twin's */
static struct bpf_object *obj_at(const struct bp_loader *l, int i)
{
	return i == 0 ? l->skel->obj : i == 1 && l->twin ? l->twin->obj : NULL;
}

/* the program after p in the skeleton, then in its twin; start with p NULL, *i 0 */
static struct bpf_program *next_prog(const struct bp_loader *l, struct bpf_program *p, int *i)
{
	struct bpf_object *obj;

	for (; (obj = obj_at(l, *i)); (*i)++, p = NULL) {
		p = bpf_object__next_program(obj, p);
		if (p)
			return p;
	}
	return NULL;
}

/*
 * What verification cost: the kernel's count of the instructions it
 * walked per program (bpf_prog_info.verified_insns, 5.16+), the start-up
 * cost that grows with every path through the programs (docs/kernels.md).
 */
static void log_verified(struct bp_loader *l, double ms)
{
	struct bpf_program *prog;
	unsigned long long total = 0;
	int i;

	for (i = 0, prog = NULL; (prog = next_prog(l, prog, &i));) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		total += info.verified_insns;
		if (info.verified_insns)
			bp_dbg("BPF %s: %u instructions verified", bpf_program__name(prog),
			       info.verified_insns);
	}
	bp_dbg("BPF programs loaded in %.0f ms, %llu instructions verified", ms, total);
}

/*
 * What the twin verifies on a second CPU: the switch and wakeup paths,
 * about half of the instructions and of the time (bp_switch 35k and
 * bp_wakeup 17k of 107k; with bp_thread_exit too, the twin finished
 * 30 ms after the skeleton). Neither is used from here by its skeleton
 * name, so the rest of the loader sees one object.
 */
static const char *const twin_progs[] = { "bp_switch", "bp_wakeup" };

struct twin_job {
	struct boundprof_bpf *skel;
	size_t heap;		/* what its parse of the kernel's BTF takes */
	uint64_t t0;		/* the loads' start (bp_now_ns()) */
	double ms;		/* its load done, since t0 */
	int err;
};

static double ms_since(uint64_t t0)
{
	return (bp_now_ns() - t0) / 1e6;
}

static void *twin_run(void *arg)
{
	struct twin_job *j = arg;

	bp_twin_heap_ready(j->heap);
	j->err = boundprof_bpf__load(j->skel);
	j->ms = ms_since(j->t0);
	return NULL;
}

/*
 * Load the programs, verified on two CPUs (twinload.h): a maps-only open
 * creates every map, then the skeleton and its twin reuse them and load
 * their shares at once. Same maps, same programs, same .rodata as one
 * load; the start is a fifth shorter (docs/kernels.md).
 */
static int load_programs(struct bp_loader *l, size_t parse_bytes)
{
	size_t n = sizeof(twin_progs) / sizeof(twin_progs[0]);
	struct boundprof_bpf *maps = NULL, *twin = NULL;
	LIBBPF_OPTS(bpf_object_open_opts, mo);
	LIBBPF_OPTS(bpf_object_open_opts, to);
	struct twin_job job = {};
	int err, empty_fd = -1;
	double maps_ms, skel_ms;
	char empty[32];
	pthread_t th;

	/*
	 * Asked for (the agent: its peak memory counts, its start does not),
	 * one CPU, or nothing for a twin to verify: one load, as libbpf does.
	 */
	if (l->serial_load || bp_online_cpus_count() < 2 ||
	    !bpf_program__autoload(l->skel->progs.bp_switch))
		return boundprof_bpf__load(l->skel);
	if (!bp_twin_empty_btf(empty, sizeof(empty), &empty_fd))
		mo.btf_custom_path = empty;
	maps = boundprof_bpf__open_opts(&mo);
	/* the skeleton's relocation subset, if it has one */
	if (l->core_btf_fd >= 0)
		to.btf_custom_path = l->core_btf_path;
	twin = boundprof_bpf__open_opts(&to);
	if (!maps || !twin) {
		err = -errno;
		goto out;
	}
	err = bp_twin_copy_config(maps->obj, l->skel->obj);
	if (!err)
		err = bp_twin_copy_config(twin->obj, l->skel->obj);
	if (err)
		goto out;
	bp_twin_maps_only(maps->obj);
	/*
	 * The maps-only load parses the kernel's BTF too (the kfunc externs
	 * need it): into heap mapped ahead, as the two loads after it, where
	 * faulting its buffers in a page at a time took 50 ms of a 300-ms
	 * start on a guest.
	 */
	bp_twin_heap_ready(parse_bytes);
	job.t0 = bp_now_ns();
	err = boundprof_bpf__load(maps);
	maps_ms = ms_since(job.t0);
	if (!err)
		err = bp_twin_reuse_maps(l->skel->obj, maps->obj);
	if (!err)
		err = bp_twin_reuse_maps(twin->obj, maps->obj);
	if (err)
		goto out;
	bp_twin_keep(l->skel->obj, twin_progs, n, false);
	bp_twin_keep(twin->obj, twin_progs, n, true);
	job.skel = twin;
	/* mapped ahead in each thread, not a page fault at a time (twinload.h) */
	job.heap = parse_bytes;
	err = -pthread_create(&th, NULL, twin_run, &job);
	if (err)
		goto out;
	err = boundprof_bpf__load(l->skel);
	skel_ms = ms_since(job.t0);
	pthread_join(th, NULL);
	bp_twin_heap_done(job.heap);
	/* which of the two loads the start waits for */
	bp_dbg("BPF loads: maps %.0f ms, then the skeleton done at %.0f ms, its twin at %.0f ms",
	       maps_ms, skel_ms, job.ms);
	if (!err)
		err = job.err;
	if (!err) {
		l->twin = twin;
		twin = NULL;
	}
out:
	/* the skeleton and its twin hold the maps now: this open is done */
	boundprof_bpf__destroy(maps);
	boundprof_bpf__destroy(twin);
	if (empty_fd >= 0)
		close(empty_fd);
	return err;
}

/*
 * The kernel types our relocations reach, for libbpf to search instead of
 * the kernel's whole BTF (corebtf.h): the skeleton and its twin each
 * searched all 125,000 types once per relocated type. Without it (no
 * kernel BTF we can read, or relocations it cannot serve), libbpf takes
 * the kernel's BTF as it always did.
 */
static void core_btf(struct bp_loader *l, const struct bp_kbtf *kb)
{
	struct bp_corebtf_stats st;
	uint64_t t0;
	uint32_t raw_sz;
	size_t elf_sz;
	const void *elf = boundprof_bpf__elf_bytes(&elf_sz);
	void *raw;
	int err;

	l->core_btf_fd = -1;
	if (!kb)
		return;
	t0 = bp_now_ns();
	err = bp_corebtf__build(kb, elf, elf_sz, &raw, &raw_sz, &st);
	if (!err) {
		err = bp_btf_memfd(raw, raw_sz, l->core_btf_path, sizeof(l->core_btf_path),
				   &l->core_btf_fd);
		free(raw);
	}
	if (err) {
		bp_dbg("CO-RE relocations against the kernel's whole BTF: %s", strerror(-err));
		return;
	}
	l->core_btf_types = st.types;
	bp_dbg("CO-RE relocations against %u kernel types (%u relocations of %u types, %u bytes, "
	       "%.1f ms)", st.types, st.relos, st.names, raw_sz, ms_since(t0));
}

static void core_btf_done(struct bp_loader *l)
{
	if (l->core_btf_fd >= 0)
		close(l->core_btf_fd);
	l->core_btf_fd = -1;
}

/*
 * libbpf frees an inner map's template once the outer map is made: its
 * key and value sizes are kept; its one entry is no cache's size
 */
static void interp_cache_spec(struct bp_interp_cache *c, struct bpf_map *outer,
			      const char *name)
{
	struct bpf_map *in = bpf_map__inner_map(outer);

	c->outer = outer;
	c->name = name;
	c->key_size = bpf_map__key_size(in);
	c->value_size = bpf_map__value_size(in);
	c->max_entries = BP_INTERP_CACHE_ENTRIES;
	c->fd = -1;
}

/*
 * The kernel preallocates an LRU map whole (1.4-1.5 MiB each of these):
 * made when the walkers get their first process of the language, they
 * cost nothing on a machine that runs none. Once, for the loader's life.
 */
static int interp_cache_make(struct bp_interp_cache *c)
{
	uint32_t zero = 0;
	int err;

	if (c->fd >= 0)
		return 0;
	c->fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, c->name, c->key_size, c->value_size,
			       c->max_entries, NULL);
	if (c->fd < 0)
		return -errno;
	if (bpf_map_update_elem(bpf_map__fd(c->outer), &zero, &c->fd, BPF_ANY)) {
		err = -errno;
		close(c->fd);
		c->fd = -1;
		return err;
	}
	c->bytes = bp_loader__fd_map_bytes(c->fd);
	return 0;
}

int bp_loader__open(struct bp_loader **out, const struct bp_loader_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, so);
	struct bp_kbtf *kb = NULL;
	size_t parse_bytes;
	struct bp_loader *l;
	uint64_t t0, per_interval;
	int err, first_cpu, i;

	*out = NULL;
	libbpf_verbose = o->verbose_libbpf;
	libbpf_set_print(libbpf_print);

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->core_btf_fd = -1;
	for (i = 0; i < BP_INTERP_CACHES; i++)
		l->caches[i].fd = -1;
	l->hz = o->hz;
	l->no_idle_samples = o->no_idle_samples;
	l->serial_load = o->serial_load;
	l->ncpus = libbpf_num_possible_cpus();
	if (l->ncpus <= 0) {
		err = l->ncpus ? l->ncpus : -EINVAL;
		bp_err("cannot count possible CPUs: %s", strerror(-err));
		goto fail;
	}

	/* the kernel's BTF, for the facts decided before load; NULL: defaults */
	err = bp_kbtf__open(BP_KBTF_PATH, &kb);
	if (err)
		bp_dbg("kernel BTF unreadable (%s): current-kernel defaults", strerror(-err));
	core_btf(l, kb);
	if (l->core_btf_fd >= 0)
		so.btf_custom_path = l->core_btf_path;
	l->skel = boundprof_bpf__open_opts(&so);
	if (!l->skel) {
		err = -errno;
		bp_err("failed to open BPF object: %s", strerror(-err));
		goto fail;
	}
	interp_cache_spec(&l->caches[BP_CACHE_PY_SEEN], l->skel->maps.py_seen, "py_seen_lru");
	interp_cache_spec(&l->caches[BP_CACHE_R_SEEN], l->skel->maps.r_seen, "r_seen_lru");
	interp_cache_spec(&l->caches[BP_CACHE_R_LOCS], l->skel->maps.r_locs, "r_locs_lru");

	/*
	 * Worst case every sample of an interval is a new (thread, stack) pair
	 * and brings a new kernel and a new user stack; 4x that leaves room for
	 * a drain that runs late. The maps are not preallocated, so headroom
	 * costs nothing until it is used.
	 */
	per_interval = (uint64_t)bp_online_cpus_count() * o->hz *
		       (o->drain_interval_s > 0 ? o->drain_interval_s : 1.0);
	l->counts_entries = clamp_u32(pow2_at_least(4 * per_interval), 4096, 1U << 20);
	l->stack_entries = l->counts_entries;
	bpf_map__set_max_entries(l->skel->maps.oncpu0, l->counts_entries);
	bpf_map__set_max_entries(l->skel->maps.oncpu1, l->counts_entries);
	/*
	 * The sample slots: 10 s of samples on every CPU (the agent's
	 * window, past which it drains even when nothing asks it to).
	 * They are preallocated, so capped at 4 MiB a buffer: past them,
	 * samples make rows in oncpu0/1 as before (sample_slots_full).
	 */
	l->smp_slots = pow2_at_least((uint64_t)o->hz * 10);
	while (l->smp_slots > 16 &&
	       (uint64_t)l->ncpus * l->smp_slots * sizeof(struct bp_oncpu_rec) > (4U << 20))
		l->smp_slots /= 2;
	l->skel->rodata->smp_cpus = l->ncpus;
	l->skel->rodata->smp_slots = l->smp_slots;
	bpf_map__set_max_entries(l->skel->maps.oncpu_slots, 2 * l->ncpus * l->smp_slots);
	bpf_map__set_max_entries(l->skel->maps.oncpu_fill, 2 * l->ncpus);
	bpf_map__set_max_entries(l->skel->maps.kstacks0, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.kstacks1, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.ustacks0, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.ustacks1, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.kstacks_s0, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.kstacks_s1, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.ustacks_s0, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.ustacks_s1, l->stack_entries);
	/* room for the budget's chunks, which the unwinder adds as its tables need them */
	l->uw_rows = o->unwind_rows ? o->unwind_rows : 1;
	l->skel->rodata->unwind_on = o->unwind_rows != 0;
	bpf_map__set_max_entries(l->skel->maps.unwind_rows,
				 (l->uw_rows + BP_UW_CHUNK_ROWS - 1) / BP_UW_CHUNK_ROWS);
	bpf_map__set_max_entries(l->skel->maps.unwind_procs,
				 o->unwind_rows ? BP_UNWIND_PROCS : 1);
	bpf_map__set_max_entries(l->skel->maps.unwind_files,
				 o->unwind_rows ? BP_UNWIND_FILES : 1);
	/* a hash map's buckets are allocated whole: 16 bytes an entry, used or not */
	bpf_map__set_max_entries(l->skel->maps.unwind_bridges,
				 o->unwind_rows ? BP_UNWIND_BRIDGES : 1);
	bpf_map__set_max_entries(l->skel->maps.pystacks0, l->stack_entries);
	bpf_map__set_max_entries(l->skel->maps.pystacks1, l->stack_entries);
	/* the Python walk is a bpf_loop() (5.17, e6f2dd0f8067), which the floor has */
	l->py_walk = !o->no_python;
	l->skel->rodata->py_walk = l->py_walk;
	l->r_walk = !o->no_r;
	l->skel->rodata->r_walk = l->r_walk;

	/*
	 * Off-CPU rows are (thread, stacks, state) per interval; a busy system
	 * switches far more often than it samples, so give them more room.
	 */
	l->offcpu = o->offcpu;
	l->off_entries = clamp_u32(4ULL * l->counts_entries, 16384, 1U << 21);
	bpf_map__set_max_entries(l->skel->maps.off0, l->off_entries);
	bpf_map__set_max_entries(l->skel->maps.off1, l->off_entries);
	/* (woken process, waker thread, class) rows: at most one per wait */
	bpf_map__set_max_entries(l->skel->maps.wake0, l->counts_entries * 4);
	bpf_map__set_max_entries(l->skel->maps.wake1, l->counts_entries * 4);
	bpf_map__set_max_entries(l->skel->maps.net0, l->counts_entries);
	bpf_map__set_max_entries(l->skel->maps.net1, l->counts_entries);
	if (o->offcpu) {

		bpf_program__set_autoload(l->skel->progs.bp_switch, true);
		bpf_program__set_autoload(l->skel->progs.bp_wakeup, true);
		bpf_program__set_autoload(l->skel->progs.bp_wakeup_enq, true);
		bpf_program__set_autoload(l->skel->progs.bp_wakeup_new, true);
		bpf_program__set_autoload(l->skel->progs.bp_thread_exit, true);
		bpf_program__set_autoload(l->skel->progs.bp_iter_tasks, true);
		bpf_program__set_autoload(l->skel->progs.bp_sock_state, true);
		l->skel->rodata->offcpu_ustacks = o->offcpu_ustacks;
		l->skel->rodata->offcpu_preempt_stacks = !o->no_preempt_stacks;
		l->skel->rodata->ksite_check = ksite_check();
		l->skel->rodata->follow_peers = o->filter && o->follow_peers;
		l->skel->rodata->follow_skip_tgid = getpid();
		l->skel->rodata->switch_has_prev_state = switch_has_prev_state(kb);
		if (!l->skel->rodata->switch_has_prev_state)
			bp_info("sched_switch has no prev_state argument (kernel before 5.18): "
				"switch states are read from the task");
		l->skel->rodata->preempt_from_rq = preempt_from_rq(kb);
		if (!l->skel->rodata->preempt_from_rq)
			bp_info("the kernel's BTF does not place __preempt_count: wakers in "
				"interrupts are taken for the task they interrupted");
	}

	first_cpu = bp_online_cpu_first();
	l->hw_cycles = have_cycles(first_cpu < 0 ? 0 : first_cpu, o->hz);
	l->skel->rodata->period_is_ns = !l->hw_cycles;
	l->skel->rodata->filter_targets = o->filter;
	l->skel->rodata->skip_tgid = o->skip_self ? (uint32_t)getpid() : 0;
	if (o->cgroup) {
		/* the tree's enum bp_cg_tree: 0 v2, 1 the v1 cpu tree, 2 the v1 memory tree */
		l->skel->rodata->filter_cgroup_id = o->cgroup->id;
		l->skel->rodata->filter_cgroup_level = o->cgroup->level;
		l->skel->rodata->filter_cgroup_tree = o->cgroup->tree;
		if (o->cgroup->tree != BP_CGT_V2) {
			int ssid = cgroup_ssid(kb, o->cgroup->tree == BP_CGT_V1_CPU ?
						       "cpu_cgrp_id" : "memory_cgrp_id");

			if (ssid < 0) {
				err = ssid;
				bp_err("no %s controller in the kernel's BTF: cannot filter by a v1 "
				       "cgroup", bp_cg_tree_name(o->cgroup->tree));
				goto fail;
			}
			l->skel->rodata->filter_cgroup_ssid = ssid;
		}
	}

	/*
	 * A sampled process's mappings walked at its exit need the task_vma
	 * iterator (6.7, for every program type); before it, the variant
	 * without the walk, and new processes' maps are read at once, as
	 * before (bpf/boundprof.h, struct bp_exit_event).
	 */
	l->exit_walk = kb && bp_kbtf__find(kb, "bpf_iter_task_vma_new", BTF_KIND_FUNC) > 0;
	bpf_program__set_autoload(l->skel->progs.bp_exit, l->exit_walk);
	bpf_program__set_autoload(l->skel->progs.bp_exit_nowalk, !l->exit_walk);

	if (!o->no_blockio) {
		err = bp_blockio__prepare(l->skel, l->counts_entries, kb);
		if (err)
			goto fail;
	}
	/*
	 * Each load parses the kernel's BTF: the file read, then copied
	 * (libbpf's btf_new()), both alive at once, and an index. Its heap,
	 * mapped ahead, made the start 10% shorter on this guest.
	 */
	parse_bytes = kb ? 2 * bp_kbtf__size(kb) + (1 << 20) : 0;
	bp_kbtf__free(kb);
	kb = NULL;

	t0 = bp_now_ns();
	err = load_programs(l, parse_bytes);
	core_btf_done(l);
	if (err) {
		bp_err("failed to load BPF programs: %s (run with -v for the verifier log)",
		       strerror(-err));
		goto fail;
	}
	log_verified(l, ms_since(t0));
	*out = l;
	return 0;
fail:
	bp_kbtf__free(kb);
	bp_loader__free(l);
	return err;
}

int bp_loader__add_target(struct bp_loader *l, uint32_t tgid)
{
	uint8_t one = 1;
	int err;

	err = bpf_map__update_elem(l->skel->maps.targets, &tgid, sizeof(tgid), &one,
				   sizeof(one), BPF_ANY);
	if (err)
		bp_err("failed to add process %u to the target set: %s", tgid, strerror(-err));
	return err;
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct bp_loader *l = ctx;
	uint32_t kind;

	if (size < sizeof(kind))
		return 0;
	memcpy(&kind, data, sizeof(kind));
	if (kind == BP_REC_THREAD || kind == BP_REC_PROC) {
		if (l->rec_fn)
			l->rec_fn(l->rec_ctx, data, size);
	} else if (size >= sizeof(struct bp_event) && l->ev_fn) {
		l->ev_fn(l->ev_ctx, data, size);
	}
	return 0;
}

void bp_loader__set_rec_fn(struct bp_loader *l, bp_rec_fn fn, void *ctx)
{
	l->rec_fn = fn;
	l->rec_ctx = ctx;
}

static int on_py_ring(void *ctx, void *data, size_t size)
{
	struct bp_loader *l = ctx;

	if (l->py_fn)
		l->py_fn(l->py_ctx, data, size);
	return 0;
}

void bp_loader__set_sample_fn(struct bp_loader *l, bp_sample_fn fn, void *ctx)
{
	l->smp_fn = fn;
	l->smp_ctx = ctx;
}

int bp_loader__drain_samples(struct bp_loader *l, int idx)
{
	uint32_t cpu, i, n, set;
	int err = 0;

	if (!l->smp_fill)
		return 0;
	for (cpu = 0; cpu < (uint32_t)l->ncpus; cpu++) {
		set = (idx & 1) * l->ncpus + cpu;
		/* the flip's grace period ordered the programs' stores before this */
		n = __atomic_load_n(&l->smp_fill[set].n, __ATOMIC_ACQUIRE);
		if (n > l->smp_slots)
			n = l->smp_slots;
		for (i = 0; !err && l->smp_fn && i < n; i++)
			err = l->smp_fn(l->smp_ctx, &l->smp_recs[(size_t)set * l->smp_slots + i]);
		/* empty when the buffer is flipped in again, even after a failure: never read twice */
		__atomic_store_n(&l->smp_fill[set].n, 0, __ATOMIC_RELEASE);
	}
	return err;
}

/* an mmapable array map's values, mapped; *len its length */
static void *map_values(struct bpf_map *m, size_t *len)
{
	size_t sz = (size_t)bpf_map__max_entries(m) * bpf_map__value_size(m);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	sz = (sz + page - 1) / page * page;
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return NULL;
	*len = sz;
	return p;
}

/* the sample slots mapped: before the perf events start */
static int map_samples(struct bp_loader *l)
{
	l->smp_recs = map_values(l->skel->maps.oncpu_slots, &l->smp_recs_len);
	l->smp_fill = l->smp_recs ? map_values(l->skel->maps.oncpu_fill, &l->smp_fill_len) :
				    NULL;
	return l->smp_fill ? 0 : -errno;
}

static int attach_perf_events(struct bp_loader *l)
{
	int *cpus = NULL, n, i, err = 0;

	n = bp_online_cpus(&cpus);
	if (n < 0) {
		bp_err("cannot read the online CPU list: %s", strerror(-n));
		return n;
	}
	l->pe_fds = calloc(n, sizeof(*l->pe_fds));
	l->pe_links = calloc(n, sizeof(*l->pe_links));
	if (!l->pe_fds || !l->pe_links) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		int fd = perf_open(cpus[i], l->hz, l->hw_cycles, l->no_idle_samples);

		/* a CPU that went offline since we listed them is not an error */
		if (fd == -ENODEV)
			continue;
		if (fd < 0) {
			err = fd;
			bp_err("failed to open the %s perf event on cpu %d: %s",
			       l->hw_cycles ? "cycles" : "cpu-clock", cpus[i], strerror(-err));
			goto out;
		}
		l->pe_fds[l->nr_pe] = fd;
		l->pe_links[l->nr_pe] = bpf_program__attach_perf_event(l->skel->progs.bp_oncpu, fd);
		if (!l->pe_links[l->nr_pe]) {
			err = -errno;
			close(fd);
			bp_err("failed to attach to the perf event on cpu %d: %s", cpus[i],
			       strerror(-err));
			goto out;
		}
		l->nr_pe++;
	}
out:
	free(cpus);
	return err;
}

int bp_loader__attach(struct bp_loader *l, bp_event_fn fn, void *ctx)
{
	int err;

	l->ev_fn = fn;
	l->ev_ctx = ctx;
	l->rb = ring_buffer__new(bpf_map__fd(l->skel->maps.events), on_ringbuf, l, NULL);
	if (!l->rb) {
		err = -errno;
		bp_err("failed to set up the event ring buffer: %s", strerror(-err));
		return err;
	}
	err = map_samples(l);
	if (err) {
		bp_err("failed to map the on-CPU sample slots: %s", strerror(-err));
		return err;
	}
	/* process tracking first, so no process escapes between the two steps */
	err = boundprof_bpf__attach(l->skel);
	if (!err && l->twin)
		err = boundprof_bpf__attach(l->twin);
	if (err) {
		bp_err("failed to attach the tracepoints: %s", strerror(-err));
		return err;
	}
	err = attach_perf_events(l);
	if (err)
		return err;
	l->blockio = bp_blockio__new(l->skel, NULL);
	if (!l->blockio) {
		err = -errno;
		bp_err("failed to start block IO accounting: %s", strerror(-err));
	}
	return err;
}

int bp_loader__poll(struct bp_loader *l, int timeout_ms)
{
	/*
	 * Not waiting: the ring is read where it is mapped. An epoll_wait
	 * that cannot block learns nothing the read does not, and the agent
	 * made one after every wake-up (30 system calls a second under
	 * process churn, each ~20 us on a guest).
	 */
	int n = timeout_ms ? ring_buffer__poll(l->rb, timeout_ms) : 0, m;

	/*
	 * Events that wake no one (an exit, an exec the reader needs no
	 * haste for: common.bpf.h event_wakeup()) leave the ring's fd
	 * unready: every pass reads them, whether or not something woke it.
	 */
	if (n >= 0) {
		m = ring_buffer__consume(l->rb);
		n = m < 0 ? m : n + m;
	}

	bp_loader__consume_py(l);
	return n == -EINTR ? 0 : n;
}

/*
 * The interpreter ring is mapped when the first interpreter is handed to
 * the walkers: only they write to it, and its 1 MiB (2 MiB of the agent's
 * RSS: the data pages are mapped twice) is wasted on a machine that runs
 * no Python or R. So are the caches of each language.
 */
int bp_loader__open_interp(struct bp_loader *l, bool r)
{
	int err;

	if (!l)
		return 0;
	if (r) {
		err = interp_cache_make(&l->caches[BP_CACHE_R_SEEN]);
		if (!err)
			err = interp_cache_make(&l->caches[BP_CACHE_R_LOCS]);
	} else {
		err = interp_cache_make(&l->caches[BP_CACHE_PY_SEEN]);
	}
	if (err) {
		bp_err("failed to make the %s walker's caches: %s", r ? "R" : "Python",
		       strerror(-err));
		return err;
	}
	if (!l->py_fn || l->py_rb)
		return 0;
	l->py_rb = ring_buffer__new(bpf_map__fd(l->skel->maps.py_events), on_py_ring, l, NULL);
	if (!l->py_rb) {
		err = -errno;
		bp_err("failed to set up the Python and R ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

void bp_loader__consume_py(struct bp_loader *l)
{
	if (l->py_rb)
		ring_buffer__consume(l->py_rb);
}

static void sync_programs(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	/*
	 * MEMBARRIER_CMD_GLOBAL waits for an RCU grace period, and every BPF
	 * program runs inside an RCU read-side section (or with interrupts
	 * off), so afterwards none can still hold the old buffer index.
	 */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	/* no membarrier (nohz_full): programs run for microseconds */
	nanosleep(&ts, NULL);
}

int bp_loader__flip(struct bp_loader *l)
{
	uint32_t old = l->skel->bss->buf_idx & 1;

	__atomic_store_n(&l->skel->bss->buf_idx, old ^ 1, __ATOMIC_SEQ_CST);
	sync_programs();
	return old;
}

void bp_loader__pending(const struct bp_loader *l, struct bp_drain_pend *out)
{
	const volatile __u64 *b;
	int i;

	for (i = 0; i < BP_PEND__MAX; i++) {
		b = &l->skel->bss->pend_rows[i];
		out->rows[i] = __atomic_load_n(b, __ATOMIC_RELAXED);
	}
	b = &l->skel->bss->pend_samples;
	out->samples = __atomic_load_n(b, __ATOMIC_RELAXED);
}

static uint32_t created_entries(const struct bpf_map *m)
{
	return bpf_map__autocreate(m) ? bpf_map__max_entries(m) : 0;
}

void bp_loader__pend_entries(const struct bp_loader *l, uint32_t out[BP_PEND__MAX])
{
	const struct boundprof_bpf *k = l->skel;

	out[BP_PEND_ONCPU] = created_entries(k->maps.oncpu0);
	out[BP_PEND_STACKS] = created_entries(k->maps.kstacks0);
	out[BP_PEND_OFF] = created_entries(k->maps.off0);
	out[BP_PEND_WAKE] = created_entries(k->maps.wake0);
	out[BP_PEND_NET] = created_entries(k->maps.net0);
	out[BP_PEND_IO] = created_entries(k->maps.io0);
}

int bp_loader__stats(struct bp_loader *l, struct bp_stats *sum)
{
	struct bp_stats *per_cpu;
	uint32_t zero = 0;
	int i, j, err;

	memset(sum, 0, sizeof(*sum));
	per_cpu = calloc(l->ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	err = bpf_map__lookup_elem(l->skel->maps.stats, &zero, sizeof(zero), per_cpu,
				   l->ncpus * sizeof(*per_cpu), 0);
	if (!err) {
		for (i = 0; i < l->ncpus; i++)
			for (j = 0; j < BP_STAT__MAX; j++)
				sum->v[j] += per_cpu[i].v[j];
	}
	free(per_cpu);
	return err;
}

int bp_loader__set_site_ranges(struct bp_loader *l, const struct bp_site_range *r, uint32_t n)
{
	uint32_t i, max = sizeof(l->skel->bss->site_lo) / sizeof(l->skel->bss->site_lo[0]);

	if (n > max)
		n = max;
	for (i = 1; i < n; i++)
		if (r[i].lo < r[i - 1].hi)
			return -EINVAL;
	/* publish the ranges before the count that makes programs read them */
	__atomic_store_n(&l->skel->bss->nr_site_ranges, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		l->skel->bss->site_lo[i] = r[i].lo;
		l->skel->bss->site_hi[i] = r[i].hi;
		l->skel->bss->site_cat[i] = r[i].site;
	}
	__atomic_store_n(&l->skel->bss->nr_site_ranges, n, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&l->skel->bss->site_gen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * The task walk's records, handed to fn as they are read. Streamed through
 * one 64 KiB buffer: reading the whole walk first took a megabyte from the
 * heap at every drain (256 bytes a thread), a tenth of the agent's peak.
 * A read can end inside a record; its start is carried to the next read.
 */
#define ITER_BUF	(64 * 1024)

static int iter_records(char *buf, size_t len, size_t *used, uint64_t *threads, bp_rec_fn fn,
			void *ctx)
{
	size_t off = 0;

	while (off + sizeof(uint32_t) <= len) {
		uint32_t kind;
		size_t sz;

		memcpy(&kind, buf + off, sizeof(kind));
		sz = kind == BP_REC_THREAD ? sizeof(struct bp_thr_rec) :
		     kind == BP_REC_PROC ? sizeof(struct bp_proc_rec) : 0;
		if (!sz)
			return -EINVAL;
		if (off + sz > len)
			break;
		/* every thread the walk found has a storage element: it made one if need be */
		if (kind == BP_REC_THREAD)
			(*threads)++;
		fn(ctx, buf + off, sz);
		off += sz;
	}
	*used = off;
	return 0;
}

int bp_loader__iterate(struct bp_loader *l, bp_rec_fn fn, void *ctx)
{
	struct bpf_link *link = l->skel->links.bp_iter_tasks;
	size_t len = 0, used, total = 0;
	uint64_t threads = 0;
	char *buf;
	ssize_t n;
	int fd, err = 0;

	if (!l->offcpu || !link)
		return 0;
	buf = malloc(ITER_BUF);
	if (!buf)
		return -ENOMEM;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		bp_err("failed to start the task iterator: %s", strerror(-err));
		free(buf);
		return err;
	}
	for (;;) {
		n = read(fd, buf + len, ITER_BUF - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			bp_err("failed to read the task iterator: %s", strerror(-err));
			goto out;
		}
		if (n == 0)
			break;
		len += n;
		err = iter_records(buf, len, &used, &threads, fn, ctx);
		if (err)
			break;
		total += used;
		len -= used;
		memmove(buf, buf + used, len);
	}
	if (!err && len)
		err = -EINVAL;
	if (err) {
		bp_err("task iterator: malformed record at offset %zu", total);
		goto out;
	}
	l->tls_threads = threads;
out:
	close(fd);
	free(buf);
	return err;
}

int bp_loader__off_fd(struct bp_loader *l, int idx)
{
	return bpf_map__fd(idx ? l->skel->maps.off1 : l->skel->maps.off0);
}

int bp_loader__wake_fd(struct bp_loader *l, int idx)
{
	return bpf_map__fd(idx ? l->skel->maps.wake1 : l->skel->maps.wake0);
}

int bp_loader__net_fd(struct bp_loader *l, int idx)
{
	return bpf_map__fd(idx ? l->skel->maps.net1 : l->skel->maps.net0);
}

int bp_loader__oncpu_fd(struct bp_loader *l, int idx)
{
	return bpf_map__fd(idx ? l->skel->maps.oncpu1 : l->skel->maps.oncpu0);
}

int bp_loader__stacks_fd(struct bp_loader *l, int idx, bool user, bool shrt)
{
	struct boundprof_bpf *s = l->skel;

	if (shrt)
		return bpf_map__fd(user ? (idx ? s->maps.ustacks_s1 : s->maps.ustacks_s0)
					: (idx ? s->maps.kstacks_s1 : s->maps.kstacks_s0));
	if (user)
		return bpf_map__fd(idx ? s->maps.ustacks1 : s->maps.ustacks0);
	return bpf_map__fd(idx ? s->maps.kstacks1 : s->maps.kstacks0);
}

int bp_loader__unwind_rows_fd(struct bp_loader *l)
{
	return bpf_map__fd(l->skel->maps.unwind_rows);
}

int bp_loader__unwind_procs_fd(struct bp_loader *l)
{
	return bpf_map__fd(l->skel->maps.unwind_procs);
}

int bp_loader__unwind_files_fd(struct bp_loader *l)
{
	return bpf_map__fd(l->skel->maps.unwind_files);
}

int bp_loader__pystacks_fd(struct bp_loader *l, int idx)
{
	return bpf_map__fd(idx ? l->skel->maps.pystacks1 : l->skel->maps.pystacks0);
}

int bp_loader__py_procs_fd(struct bp_loader *l)
{
	return bpf_map__fd(l->skel->maps.py_procs);
}

int bp_loader__r_procs_fd(struct bp_loader *l)
{
	return bpf_map__fd(l->skel->maps.r_procs);
}

void bp_loader__interp_added(struct bp_loader *l)
{
	/* after the map update: a program that sees the new count finds the entry */
	__atomic_add_fetch(&l->skel->bss->interp_gen, 1, __ATOMIC_SEQ_CST);
}

void bp_loader__unwind_rows_written(struct bp_loader *l)
{
	/* after the rows: a walk that reads the new count reads the new rows */
	__atomic_add_fetch(&l->skel->bss->uw_rows_gen, 1, __ATOMIC_SEQ_CST);
}

/* whether the kernel counts the programs' run time: ours, or kernel.bpf_stats_enabled */
static bool run_time_counted(const struct bp_loader *l)
{
	FILE *f;
	int on = 0;

	/* the kernel only counts while someone holds the stats on */
	if (l->stats_fd > 0)
		return true;
	f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	if (!f)
		return false;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	return on;
}

int bp_loader__prog_runs(struct bp_loader *l, struct bp_prog_run *runs, int max)
{
	struct bpf_program *prog;
	int i, n = 0;

	if (!run_time_counted(l))
		return -ENODATA;
	for (i = 0, prog = NULL; n < max && (prog = next_prog(l, prog, &i));) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		/* not loaded (the other variant of a pair, a probe the kernel lacks) */
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		snprintf(runs[n].name, sizeof(runs[n].name), "%s", bpf_program__name(prog));
		runs[n].ns = info.run_time_ns;
		runs[n].runs = info.run_cnt;
		n++;
	}
	return n;
}

void bp_loader__log_run_stats(struct bp_loader *l)
{
	struct bp_prog_run runs[BP_PROG_RUNS_MAX];
	int i, n = bp_loader__prog_runs(l, runs, BP_PROG_RUNS_MAX);

	for (i = 0; i < n; i++)
		if (runs[i].runs)
			bp_dbg("BPF %s: %llu runs, %.0f ns per run", runs[i].name,
			       (unsigned long long)runs[i].runs, (double)runs[i].ns / runs[i].runs);
}

int bp_loader__prog_run(struct bp_loader *l, const char *name, uint64_t *ns, uint64_t *runs)
{
	struct bpf_prog_info info = {};
	struct bpf_program *prog;
	struct bpf_object *obj;
	__u32 len = sizeof(info);
	int i, fd = -1;

	/* loaded in one of the two: the other holds it unloaded */
	for (i = 0; fd < 0 && (obj = obj_at(l, i)); i++)
		if ((prog = bpf_object__find_program_by_name(obj, name)))
			fd = bpf_program__fd(prog);
	if (fd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (!info.run_cnt)
		return -ENODATA;
	*ns = info.run_time_ns;
	*runs = info.run_cnt;
	return 0;
}

uint64_t bp_loader__fd_map_bytes(int fd)
{
	char path[64], line[128];
	unsigned long long v;
	uint64_t total = 0;
	FILE *f;

	/* what the kernel charges for the map, as its fdinfo says ("memlock:") */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			total += v;
	fclose(f);
	return total;
}

/* a hash map that allocates its elements as it fills: the kernel charges them as they come */
static bool map_grows(const struct bpf_map *map)
{
	enum bpf_map_type t = bpf_map__type(map);

	return (t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_PERCPU_HASH ||
		t == BPF_MAP_TYPE_HASH_OF_MAPS) && (bpf_map__map_flags(map) & BPF_F_NO_PREALLOC);
}

/*
 * Every map's fdinfo was read at every call: an open, a read and a close
 * each, 60 of them, most of a /metrics scrape (1.7 ms of the agent's CPU,
 * a fifth of its idle cost under a scrape every 5 s). A preallocated
 * map's charge is fixed at its creation: read once. The maps that grow
 * are found once too (without the fd array, each call reads them all).
 */
static void map_bytes_split(struct bp_loader *l)
{
	struct bpf_map *map;
	int n = 0;

	bpf_object__for_each_map(map, l->skel->obj)
		n++;
	l->grow_fds = calloc(n + 1, sizeof(*l->grow_fds));
	if (!l->grow_fds)
		return;
	bpf_object__for_each_map(map, l->skel->obj) {
		if (bpf_map__fd(map) < 0)
			continue;
		if (map_grows(map))
			l->grow_fds[l->nr_grow++] = bpf_map__fd(map);
		else
			l->fixed_map_bytes += bp_loader__fd_map_bytes(bpf_map__fd(map));
	}
	l->maps_split = true;
}

/*
 * The kernel's element of a local storage map: struct bpf_local_storage_elem,
 * whose data starts on a cache line of its own, 128 bytes before the value
 * (6.1 and 6.18 alike on x86-64, by their BTF).
 */
#define LS_ELEM_HEAD	128

uint64_t bp_loader__slab_bytes(uint64_t n)
{
	uint64_t s = 8;

	if (n > 64 && n <= 96)
		return 96;
	if (n > 128 && n <= 192)
		return 192;
	/* kmalloc's caches end at two pages; beyond, whole pages by power of two */
	while (s < n)
		s <<= 1;
	return s;
}

uint64_t bp_loader__thread_storage_bytes(const struct bp_loader *l)
{
	if (!l->offcpu)
		return 0;
	/*
	 * The tls map's own charge (memlock in its fdinfo) is its buckets
	 * only: the kernel counts none of its elements there ("not counted
	 * currently", bpf_local_storage_map_mem_usage()). Measured on 6.18:
	 * 300 sleeping threads more took 312 more objects of kmalloc-cg-8k
	 * (/proc/slabinfo) for a 5,296-byte value.
	 */
	return l->tls_threads *
	       bp_loader__slab_bytes(LS_ELEM_HEAD + bpf_map__value_size(l->skel->maps.tls));
}

uint64_t bp_loader__map_bytes(struct bp_loader *l)
{
	struct bpf_map *map;
	uint64_t total = 0;
	int i;

	if (!l->maps_split)
		map_bytes_split(l);
	if (l->maps_split) {
		total = l->fixed_map_bytes;
		for (i = 0; i < l->nr_grow; i++)
			total += bp_loader__fd_map_bytes(l->grow_fds[i]);
	} else {
		bpf_object__for_each_map(map, l->skel->obj)
			if (bpf_map__fd(map) >= 0)
				total += bp_loader__fd_map_bytes(bpf_map__fd(map));
	}
	for (i = 0; i < BP_INTERP_CACHES; i++)
		total += l->caches[i].bytes;
	return total + bp_loader__thread_storage_bytes(l);
}

int bp_loader__count_run_time(struct bp_loader *l)
{
	int fd;

	if (l->stats_fd > 0)
		return 0;
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0)
		return fd;
	l->stats_fd = fd;
	return 0;
}

void bp_loader__free(struct bp_loader *l)
{
	int i;

	if (!l)
		return;
	for (i = 0; i < l->nr_pe; i++) {
		bpf_link__destroy(l->pe_links[i]);
		close(l->pe_fds[i]);
	}
	free(l->pe_links);
	free(l->pe_fds);
	free(l->grow_fds);
	ring_buffer__free(l->rb);
	ring_buffer__free(l->py_rb);
	if (l->smp_recs)
		munmap(l->smp_recs, l->smp_recs_len);
	if (l->smp_fill)
		munmap(l->smp_fill, l->smp_fill_len);
	bp_blockio__free(l->blockio);
	boundprof_bpf__destroy(l->twin);
	boundprof_bpf__destroy(l->skel);
	for (i = 0; i < BP_INTERP_CACHES; i++)
		if (l->caches[i].fd >= 0)
			close(l->caches[i].fd);
	if (l->stats_fd > 0)
		close(l->stats_fd);
	core_btf_done(l);
	free(l);
}
