// SPDX-License-Identifier: GPL-2.0
/*
 * One process's threads as they are now (dump.h, docs/dump.md).
 *
 * The kernel side (bpf/dump.bpf.c) runs once, as a sleepable task
 * iterator, and writes a record per thread: state, kernel stack, user
 * registers, 16 KiB of user stack and the facts of the file its system
 * call names. Here the user stack is unwound with the same CFI rows and
 * the same step (bpf/unwind.h) the BPF walker applies while recording,
 * reading the copy (and, past it, the living process), then every address
 * is named by the symbolizer and the Python frames walked from the thread
 * pointer and merged in, as collect.c does for samples.
 *
 * Everything read from the process besides the iterator's copy goes
 * through process_vm_readv() and /proc/PID, with the caller's own
 * credentials: bp_dump__take() first checks that the caller may read the
 * process's memory (what ptrace would need), so the kernel copy never
 * hands it what it could not read itself.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dump.skel.h"
#include "dump_rec.h"
#include "rules.h"
#include "collect/dump.h"
#include "collect/loader.h"
#include "collect/python.h"
#include "collect/session.h"
#include "model/profile.h"
#include "proc/procinfo.h"
#include "proc/procmaps.h"
#include "symbolize/dwarf_cfi.h"
#include "symbolize/elfsym.h"
#include "symbolize/symbols.h"
#include "util/log.h"
#include "util/readfile.h"

/* threads read at most: a bigger process is cut, and says so */
#define THREADS_MAX	8192
/* frames one address may expand to (inlined functions, then the function) */
#define ADDR_FRAMES	4
#define USER_MAX	(ADDR_FRAMES * BP_MAX_STACK_DEPTH)
/* kernel frames looked at for the wait site, as bp_switch does */
#define SITE_SCAN	16

static const char *const state_names[BP_DS__MAX] = {
	"running", "runnable", "sleeping", "disk", "stopped", "zombie",
};

const char *bp_dump_state_name(uint8_t state)
{
	return state < BP_DS__MAX ? state_names[state] : "unknown";
}

/* --- reading the process ---------------------------------------------------- */

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* may the caller read pid's memory? The kernel's ptrace check, on an open of its mem */
static int check_access(pid_t pid)
{
	char path[64], buf[512], *p;
	long tgid = -1;
	FILE *f;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f) {
		err = errno == ENOENT ? -ESRCH : -errno;
		bp_err("no process %d%s", pid, err == -ESRCH ? "" : ": cannot read /proc");
		return err;
	}
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "Tgid:", 5))
			tgid = strtol(buf + 5, &p, 10);
	fclose(f);
	if (tgid != pid) {
		bp_err("%d is a thread of process %ld: dump -p %ld", pid, tgid, tgid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		/* a kernel thread, or a zombie: no memory, nothing of it to read */
		if (err == -ESRCH)
			return 0;
		if (err == -ENOENT) {
			bp_err("no process %d", pid);
			return -ESRCH;
		}
		bp_err("not permitted to read the memory of process %d (%s): run as its owner or"
		       " root", pid, strerror(-err));
		return err == -EACCES ? -EPERM : err;
	}
	close(fd);
	return 0;
}

/* --- the kernel's snapshot ---------------------------------------------------- */

/*
 * The threads the iterator found on a CPU, again, each by a sample taken
 * while it runs (a per-thread cpu-clock event every SAMPLE_NS of its run
 * time): its registers then match its stack. Whatever does not run again
 * within SAMPLE_WAIT_NS keeps the iterator's record.
 */
#define SAMPLE_NS	1000000ULL
#define SAMPLE_WAIT_NS	300000000ULL

static void sample_running(struct dump_bpf *skel, struct bp_dump_rec *recs, uint32_t nr)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = SAMPLE_NS,
	};
	struct bpf_link *links[BP_DUMP_SAMPLES];
	uint32_t idx[BP_DUMP_SAMPLES], n = 0, got = 0, i;
	bool done[BP_DUMP_SAMPLES] = { false };
	int fd, mfd = bpf_map__fd(skel->maps.dump_samples);
	uint64_t end;
	struct timespec ts;

	for (i = 0; i < nr && n < BP_DUMP_SAMPLES; i++) {
		if (!recs[i].on_cpu || (recs[i].flags & BP_DUMP_KTHREAD))
			continue;
		fd = syscall(__NR_perf_event_open, &attr, recs[i].tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			bp_dbg("thread %u: no sample event: %s", recs[i].tid, strerror(errno));
			continue;
		}
		links[n] = bpf_program__attach_perf_event(skel->progs.bp_dump_sample, fd);
		if (!links[n]) {
			close(fd);
			continue;
		}
		idx[n++] = i;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + SAMPLE_WAIT_NS;
	while (n && got < n) {
		struct timespec d = { 0, 5000000 };

		for (i = 0; i < n; i++) {
			uint32_t tid = recs[idx[i]].tid;

			if (!done[i] && !bpf_map_lookup_elem(mfd, &tid, &recs[idx[i]])) {
				done[i] = true;
				got++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec >= end)
			break;
		if (got < n)
			nanosleep(&d, NULL);
	}
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);	/* closes the event's fd */
}

/* libbpf's messages (a verifier log runs to megabytes) are detail: -vv shows them */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	size_t n;

	if (vasprintf(&msg, fmt, ap) < 0)
		return 0;
	n = strlen(msg);
	if (n && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	bp_dbg("libbpf: %s", msg);
	free(msg);
	return 0;
}

static int snapshot(pid_t pid, struct bp_dump_rec **out, uint32_t *nr)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	struct dump_bpf *skel;
	struct bpf_link *link = NULL;
	size_t len = 0, cap = 0;
	char *buf = NULL;
	ssize_t n;
	int fd = -1, err;

	memset(&linfo, 0, sizeof(linfo));
	*out = NULL;
	*nr = 0;
	libbpf_set_print(libbpf_print);
	skel = dump_bpf__open();
	if (!skel) {
		err = -errno;
		bp_err("failed to open the dump program: %s", strerror(-err));
		return err;
	}
	skel->rodata->target_tgid = pid;
	err = dump_bpf__load(skel);
	if (err) {
		bp_err("failed to load the dump program: %s (it needs Linux 5.18 or later, for"
		       " sleepable task iterators and bpf_copy_from_user_task)", strerror(-err));
		err = err == -EINVAL || err == -ENOENT || err == -EOPNOTSUPP ? -ENOTSUP : err;
		goto out;
	}
	/* only this process's threads (Linux 6.1+); before that every task, filtered in BPF */
	linfo.task.pid = (uint32_t)pid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(skel->progs.bp_dump_tasks, &opts);
	if (!link)
		link = bpf_program__attach_iter(skel->progs.bp_dump_tasks, NULL);
	if (!link) {
		err = -errno;
		bp_err("failed to attach the task iterator: %s", strerror(-err));
		goto out;
	}
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		bp_err("failed to run the task iterator: %s", strerror(-err));
		goto out;
	}
	for (;;) {
		if (cap - len < 64 * 1024) {
			size_t ncap = cap ? cap * 2 : 256 * 1024;
			char *nb;

			if (ncap > (size_t)THREADS_MAX * sizeof(struct bp_dump_rec) + 64 * 1024) {
				bp_warn("process %d has more than %u threads: the first %u shown",
					pid, THREADS_MAX, (unsigned int)(len / sizeof(struct bp_dump_rec)));
				break;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			bp_err("failed to read the task iterator: %s", strerror(-err));
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	*out = (struct bp_dump_rec *)buf;
	*nr = len / sizeof(struct bp_dump_rec);
	buf = NULL;
	sample_running(skel, *out, *nr);
	err = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	dump_bpf__destroy(skel);
	return err;
}

/* --- unwinding ----------------------------------------------------------------- */

struct xmap {
	uint64_t start, end, pgoff;
	bool tried;
	bool ok;
	uint64_t bias;		/* ELF vaddr = address - bias */
	struct bp_cfi_table t;
};

struct maps {
	struct xmap *v;
	uint32_t n, cap;
};

static int add_xmap(const struct bp_maps_line *l, void *ctx)
{
	struct maps *m = ctx;

	if (!l->exec || !l->path_len || l->path[0] != '/')
		return 0;
	if (m->n == m->cap) {
		uint32_t ncap = m->cap ? m->cap * 2 : 64;
		struct xmap *v = realloc(m->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = ncap;
	}
	memset(&m->v[m->n], 0, sizeof(m->v[0]));
	m->v[m->n].start = l->start;
	m->v[m->n].end = l->end;
	m->v[m->n].pgoff = l->pgoff;
	m->n++;
	return 0;
}

static void maps_free(struct maps *m)
{
	uint32_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].ok)
			bp_cfi__free(&m->v[i].t);
	free(m->v);
}

/* the mapping's CFI rows, built at its first use from the very inode mapped */
static struct xmap *xmap_of(struct maps *m, pid_t pid, uint64_t addr)
{
	struct xmap *x = NULL;
	struct bp_elf *e;
	uint64_t v0;
	char path[96];
	uint32_t i;
	int fd;

	for (i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			x = &m->v[i];
	if (!x || x->tried)
		return x && x->ok ? x : NULL;
	x->tried = true;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)x->start, (unsigned long long)x->end);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (bp_elf__open_fd(fd, NULL, &e))
		return NULL;
	if (!bp_elf__file_to_vaddr(e, x->pgoff, &v0) &&
	    !bp_cfi__build(bp_elf__elf(e), bp_elf__size(e), &x->t)) {
		x->bias = x->start - v0;
		x->ok = true;
	}
	bp_elf__free(e);
	return x->ok ? x : NULL;
}

static const struct bp_uw_row *row_of(struct maps *m, pid_t pid, uint64_t pc)
{
	struct xmap *x = xmap_of(m, pid, pc);
	uint64_t rel;
	uint32_t lo = 0, hi;

	if (!x || !x->t.nr_rows || pc - x->bias < x->t.base)
		return NULL;
	rel = pc - x->bias - x->t.base;
	if (rel > UINT32_MAX || rel < x->t.rows[0].pc)
		return NULL;
	/* the last row at or before rel */
	hi = x->t.nr_rows;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->t.rows[mid].pc <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return &x->t.rows[lo];
}

struct uw_ctx {
	pid_t pid;
	uint64_t base;
	const uint8_t *stk;
	uint32_t len;
};

/* a word of the stack: from the kernel's copy, past it from the living process */
static int uw_read(struct uw_ctx *c, uint64_t addr, void *dst)
{
	if (addr >= c->base && addr - c->base + 8 <= c->len) {
		memcpy(dst, c->stk + (addr - c->base), 8);
		return 0;
	}
	return mem_read(c->pid, addr, dst, 8);
}

#define BP_UW_READ(ctx, addr, dst)	uw_read((ctx), (addr), (dst))
/* bpf/unwind.h (the step the BPF walker takes), not collect/unwind.h: by the -I path */
#include <unwind.h>

/* the native frames' addresses, innermost first; exact[i]: not a return address */
static uint32_t unwind(struct maps *m, const struct bp_dump_rec *r, uint64_t *ips, bool *exact,
		       bool *cut)
{
	struct uw_ctx c = { r->tgid, r->regs[BP_DR_SP], r->ustack,
			    r->ustack_len > 0 && r->ustack_len <= BP_DUMP_USTACK ?
			    (uint32_t)r->ustack_len : 0 };
	struct bp_uw_regs g = { .pc = r->regs[BP_DR_IP], .sp = r->regs[BP_DR_SP],
				.bp = r->regs[BP_DR_BP], .exact = 1 };
	uint32_t n = 0;
	int res;

	*cut = false;
	if (!g.pc)
		return 0;
	ips[n] = g.pc;
	exact[n++] = true;
	while (n < BP_MAX_STACK_DEPTH) {
		res = bp_uw_step(&c, row_of(m, r->tgid, bp_uw_lookup_pc(&g)), &g);
		if (res == BP_UW_END)
			return n;
		if (res != BP_UW_NEXT)
			break;
		ips[n] = g.pc;
		exact[n++] = g.exact;
	}
	*cut = true;
	return n;
}

/* --- naming ---------------------------------------------------------------------- */

struct ctx {
	pid_t pid;
	struct bp_syms *syms;
	struct bp_python *py;
	struct bp_profile *prof;
	struct maps maps;
	struct bp_site_range sites[BP_SITE_RANGES];
	uint32_t nr_sites;
	uint64_t gil_lo, gil_hi;
};

static void fill_frame(struct bp_frame *f, const struct bp_frame_info *fi, bool kernel)
{
	memset(f, 0, sizeof(*f));
	f->name = fi->name;
	f->module = fi->module;
	f->path = fi->path;
	f->build_id = fi->build_id;
	f->offset = fi->offset;
	f->kernel = kernel;
	f->file = fi->file;
	f->line = fi->line;
	f->inlined = fi->inlined;
}

static int64_t kframe(struct ctx *c, uint64_t ip, bool is_ret)
{
	struct bp_frame_info fi;
	struct bp_frame f;

	bp_syms__resolve_kernel(c->syms, is_ret && ip ? ip - 1 : ip, &fi);
	fill_frame(&f, &fi, true);
	return bp_profile__frame(c->prof, &f);
}

/* the frames of one user address, innermost first; how many, or -errno */
static int uframes(struct ctx *c, uint64_t ip, bool exact, uint32_t *ids, uint64_t *at)
{
	struct bp_frame_info fi[ADDR_FRAMES];
	struct bp_frame f;
	int64_t id;
	int n, i;

	n = bp_syms__resolve_user_inline(c->syms, c->pid, exact || !ip ? ip : ip - 1, fi,
					 ADDR_FRAMES);
	if (n < 1)
		n = 1;
	*at = fi[n - 1].offset;
	for (i = 0; i < n; i++) {
		fill_frame(&f, &fi[i], false);
		id = bp_profile__frame(c->prof, &f);
		if (id < 0)
			return (int)id;
		ids[i] = (uint32_t)id;
	}
	return n;
}

static uint32_t site_of(const struct ctx *c, uint64_t ip)
{
	uint32_t i;

	for (i = 0; i < c->nr_sites; i++)
		if (ip >= c->sites[i].lo && ip < c->sites[i].hi)
			return c->sites[i].site;
	return BP_WS_NONE;
}

/* the scheduler's own frames: not where a thread waits */
static bool sched_frame(const char *name)
{
	static const char *const pfx[] = { "__schedule", "schedule", "io_schedule",
					   "preempt_schedule", "__switch_to", "context_switch",
					   "__cond_resched", "bpf_", "__bpf" };
	size_t i;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

static bool syscall_entry(const char *name)
{
	return !strcmp(name, "do_syscall_64") || !strncmp(name, "entry_SYSCALL", 13) ||
	       !strcmp(name, "x64_sys_call");
}

/* the system calls whose first argument is an fd it works on (x86-64) */
static bool fd_syscall(int64_t nr)
{
	static const int16_t nrs[] = { 0, 1, 5, 8, 16, 17, 18, 19, 20, 40, 42, 43, 44, 45, 46, 47,
				       48, 72, 73, 74, 75, 77, 217, 232, 275, 276, 277, 278, 281,
				       285, 288, 295, 296, 299, 306, 307, 326, 327, 328, 441 };
	size_t i;

	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++)
		if (nr == nrs[i])
			return true;
	return false;
}

static uint8_t state_of(const struct bp_dump_rec *r)
{
	if (r->on_cpu)
		return BP_DS_RUNNING;
	if (r->state == BP_TASK_RUNNING)
		return BP_DS_RUNNABLE;
	if (r->state & (0x10 | 0x20 | BP_TASK_DEAD))	/* EXIT_DEAD, EXIT_ZOMBIE */
		return BP_DS_ZOMBIE;
	if (r->state & (0x4 | 0x8))			/* __TASK_STOPPED, __TASK_TRACED */
		return BP_DS_STOPPED;
	/* TASK_IDLE: a kernel thread waiting for work, not stuck (ps says I) */
	if ((r->state & BP_TASK_NOLOAD) && (r->state & BP_TASK_UNINTERRUPTIBLE))
		return BP_DS_SLEEPING;
	if (r->state & (BP_TASK_UNINTERRUPTIBLE | BP_TASK_RTLOCK_WAIT))
		return BP_DS_DISK;
	return BP_DS_SLEEPING;
}

static char *fd_path(pid_t pid, int fd, uint64_t ino)
{
	char path[64], buf[4096];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	/* the fd may have been closed and reused since the snapshot */
	if (stat(path, &st) || (uint64_t)st.st_ino != ino)
		return NULL;
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

static char *remote_of(const struct bp_dump_rec *r)
{
	char a[INET6_ADDRSTRLEN], out[INET6_ADDRSTRLEN + 16];
	int af = r->family == 10 ? AF_INET6 : AF_INET;

	if (!r->rport || !inet_ntop(af, r->raddr, a, sizeof(a)))
		return NULL;
	snprintf(out, sizeof(out), af == AF_INET6 ? "[%s]:%u" : "%s:%u", a, r->rport);
	return strdup(out);
}

/* one thread: its frames, its wait */
static int thread_of(struct ctx *c, const struct bp_dump_rec *r, struct bp_dump_thread *t)
{
	uint64_t ips[BP_MAX_STACK_DEPTH];
	bool exact[BP_MAX_STACK_DEPTH], in_sys = false;
	uint32_t nat[USER_MAX], merged[USER_MAX + BP_MAX_STACK_DEPTH];
	uint32_t kn = 0, nn = 0, un, i, j;
	struct bp_switch_facts f = { 0 };
	struct bp_stack ps;
	struct xmap *x;
	int64_t id;
	int k;

	t->tid = r->tid;
	memcpy(t->comm, r->comm, BP_COMM_LEN);
	t->comm[BP_COMM_LEN - 1] = '\0';
	t->state = state_of(r);
	t->syscall = -1;
	t->fd = -1;
	t->stale_regs = r->on_cpu && !(r->flags & BP_DUMP_SAMPLED);
	t->frames = calloc(BP_MAX_STACK_DEPTH + USER_MAX + BP_MAX_STACK_DEPTH, sizeof(uint32_t));
	t->native = calloc(BP_MAX_STACK_DEPTH, sizeof(uint32_t));
	t->native_at = calloc(BP_MAX_STACK_DEPTH, sizeof(uint64_t));
	if (!t->frames || !t->native || !t->native_at)
		return -ENOMEM;
	/* kernel frames, innermost first; the wait site from the first of them */
	/* a running task's kernel stack cannot be walked from elsewhere, only sampled */
	if (r->kstack_len > 0 && (!r->on_cpu || (r->flags & BP_DUMP_SAMPLED)))
		kn = (uint32_t)r->kstack_len / 8;
	if (kn > BP_MAX_STACK_DEPTH)
		kn = BP_MAX_STACK_DEPTH;
	for (i = 0; i < kn; i++) {
		const struct bp_frame *fr;

		id = kframe(c, r->kstack[i], i > 0);
		if (id < 0)
			return (int)id;
		t->frames[t->nr_frames++] = (uint32_t)id;
		fr = &c->prof->frames[id];
		if (fr->name && syscall_entry(fr->name))
			in_sys = true;
		if (i < SITE_SCAN && t->site == BP_WS_NONE) {
			t->site = site_of(c, r->kstack[i]);
			if (t->site != BP_WS_NONE)
				t->wait_func = fr->name;
		}
		if (!t->wait_func && fr->name && !sched_frame(fr->name) && !in_sys)
			t->wait_func = fr->name;
	}
	t->nr_kernel = t->nr_frames;
	/* a thread on a CPU, or waiting for one, waits in nothing */
	if (t->state == BP_DS_RUNNING || t->state == BP_DS_RUNNABLE) {
		t->wait_func = NULL;
		t->site = BP_WS_NONE;
	}
	if ((r->flags & BP_DUMP_REGS) && in_sys && r->regs[BP_DR_ORIG_AX] < 1024) {
		t->syscall = (int64_t)r->regs[BP_DR_ORIG_AX];
		t->args[0] = r->regs[BP_DR_DI];
		t->args[1] = r->regs[BP_DR_SI];
		t->args[2] = r->regs[BP_DR_DX];
		if (fd_syscall(t->syscall) && (r->flags & BP_DUMP_FD)) {
			t->fd = (int32_t)r->regs[BP_DR_DI];
			t->fd_kind = r->fd_kind;
			t->fd_path = fd_path(c->pid, t->fd, r->fd_ino);
			if (r->fd_kind == BP_FD_INET)
				t->remote = remote_of(r);
		}
	}
	/* the wait class, by the rules the recording applies at a switch */
	if (t->state == BP_DS_RUNNING) {
		t->wait_class = BP_TS_RUNNING;
	} else if (t->state == BP_DS_RUNNABLE) {
		t->wait_class = BP_TS_RUNQUEUE;
	} else {
		f.state = r->state;
		f.in_iowait = r->in_iowait;
		f.site = t->site;
		f.syscall = t->syscall >= 0 ? (uint64_t)t->syscall : ~0ULL;
		f.futex_op = r->regs[BP_DR_SI];
		f.fd_kind = t->fd >= 0 ? t->fd_kind : BP_FD_NONE;
		f.gil = t->syscall == BP_NR_FUTEX && c->gil_hi && r->regs[BP_DR_DI] >= c->gil_lo &&
			r->regs[BP_DR_DI] < c->gil_hi;
		t->gil = f.gil;
		t->wait_class = bp_wait_class(&f);
		t->pending = bp_wait_pending(&f, t->wait_class);
		t->dir = bp_site_dir(f.site ? f.site : bp_fd_site(f.syscall, f.fd_kind));
	}
	if (r->flags & BP_DUMP_KTHREAD)
		return 0;
	/* user frames: native, root first, then the Python ones merged in */
	un = unwind(&c->maps, r, ips, exact, &t->user_cut);
	t->nr_native = un;
	for (i = un; i-- > 0;) {
		uint32_t ids[ADDR_FRAMES];

		k = uframes(c, ips[i], exact[i], ids, &t->native_at[i]);
		if (k < 0)
			return k;
		t->native[i] = ids[k - 1];
		/* a stripped file's frame names its function's start: the address itself */
		x = xmap_of(&c->maps, c->pid, ips[i]);
		if (x)
			t->native_at[i] = (exact[i] || !ips[i] ? ips[i] : ips[i] - 1) - x->bias;
		/* each address's frames are innermost first: outermost first here */
		for (j = (uint32_t)k; j-- > 0 && nn < USER_MAX;)
			nat[nn++] = ids[j];
	}
	if (c->py && !bp_python__walk(c->py, c->pid, r->tid, r->regs[BP_DR_FSBASE], &ps) &&
	    ps.nr) {
		k = bp_python__merge(c->py, c->pid, &ps, nat, nn, merged,
				     USER_MAX + BP_MAX_STACK_DEPTH);
		if (k < 0)
			return k;
	} else {
		memcpy(merged, nat, nn * sizeof(*nat));
		k = (int)nn;
	}
	for (i = (uint32_t)k; i-- > 0;)
		t->frames[t->nr_frames++] = merged[i];
	return 0;
}

/* --- peers ------------------------------------------------------------------------- */

struct want {
	uint64_t ino;
	dev_t dev;		/* a named FIFO's: it is found by its path's inode */
	bool is_pipe, named;
	int acc;		/* the access mode wanted: 0 read end, 1 write end, -1 any */
	struct bp_dump_peer *peer;
	uint32_t self;		/* this process's own fd on it is not its peer */
	int32_t self_fd;
};

static int fd_accmode(pid_t pid, const char *fd)
{
	char path[320], buf[256], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "flags:");
	return p ? (int)(strtol(p + 6, NULL, 8) & 3) : -1;
}

/*
 * Who holds the other end: one pass over every process's fds (those the
 * caller may see), for all the pipes and sockets waited on at once. A pipe's
 * peer is another process with the other end open (any end when none has
 * it); a Unix socket's is the holder of the socket it is connected to.
 */
static void find_peers(struct want *w, uint32_t nw)
{
	char path[320], link[64], name[64];
	struct dirent *de, *fe;
	struct stat st;
	DIR *proc, *fds;
	bool named = false;
	uint32_t i;

	if (!nw)
		return;
	for (i = 0; i < nw; i++)
		named |= w[i].named;
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((de = readdir(proc))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fe = readdir(fds))) {
			ssize_t n;
			uint64_t ino;
			bool pipe;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, fe->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (!strncmp(link, "pipe:[", 6)) {
				pipe = true;
				ino = strtoull(link + 6, NULL, 10);
				st.st_dev = 0;
			} else if (!strncmp(link, "socket:[", 8)) {
				pipe = false;
				ino = strtoull(link + 8, NULL, 10);
				st.st_dev = 0;
			} else if (named && link[0] == '/' && !stat(path, &st) &&
				   S_ISFIFO(st.st_mode)) {
				pipe = true;
				ino = st.st_ino;
			} else {
				continue;
			}
			for (i = 0; i < nw; i++) {
				struct bp_dump_peer *p = w[i].peer;
				int fd = atoi(fe->d_name), acc;
				bool better;

				if (w[i].ino != ino || w[i].is_pipe != pipe ||
				    (w[i].named && w[i].dev != st.st_dev))
					continue;
				/* its own fd is not its peer; another fd of its own may be */
				if ((uint32_t)pid == w[i].self && fd == w[i].self_fd)
					continue;
				acc = pipe ? fd_accmode(pid, fe->d_name) : -1;
				/* the other end, and another process, first */
				better = !p->pid ||
					 (w[i].acc >= 0 && acc == w[i].acc && p->fd & 0x80000000u) ||
					 ((uint32_t)pid != w[i].self && p->pid == w[i].self);
				if (!better)
					continue;
				p->pid = (uint32_t)pid;
				p->fd = (uint32_t)fd |
					(w[i].acc >= 0 && acc != w[i].acc ? 0x80000000u : 0);
				snprintf(name, sizeof(name), "/proc/%d/comm", pid);
				n = bp_read_small(name, p->comm, sizeof(p->comm));
				if (n > 0 && p->comm[n - 1] == '\n')
					p->comm[n - 1] = '\0';
			}
		}
		closedir(fds);
	}
	closedir(proc);
	for (i = 0; i < nw; i++)
		w[i].peer->fd &= 0x7fffffffu;
}

/*
 * A TCP connection on this host: the inode of its other end, the socket in
 * the process's network namespace whose local address and port are this
 * one's remote ones and whose remote port is this one's local port
 * (/proc/PID/net/tcp{,6}), or, while the server has not accepted it yet,
 * the socket listening there; 0 for a peer elsewhere.
 */
static uint64_t tcp_peer_ino(pid_t pid, const struct bp_dump_rec *r)
{
	char path[64], line[512], la[40], ra[40];
	unsigned int lp, rp, st;
	unsigned long long ino, found = 0, listener = 0;
	static const uint8_t any[16];
	bool v6 = r->family == 10;
	uint8_t addr[16];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, v6 ? "tcp6" : "tcp");
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %*d: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %x %*s %*s %*s %*d %*d %llu",
			   la, &lp, ra, &rp, &st, &ino) != 6 || strlen(la) != (v6 ? 32 : 8))
			continue;
		/* the kernel prints each 32-bit word of the address as a number */
		for (i = 0; i < (v6 ? 4 : 1); i++) {
			char word[9];
			uint32_t v;

			memcpy(word, la + 8 * i, 8);
			word[8] = '\0';
			v = (uint32_t)strtoul(word, NULL, 16);
			memcpy(addr + 4 * i, &v, 4);
		}
		if (lp != r->rport)
			continue;
		if (rp == r->lport && !memcmp(addr, r->raddr, v6 ? 16 : 4) && ino)
			found = ino;
		/* not accepted yet (no inode): the server is who listens on it */
		else if (st == 0x0a && ino &&
			 (!memcmp(addr, r->raddr, v6 ? 16 : 4) || !memcmp(addr, any, v6 ? 16 : 4)))
			listener = ino;
	}
	fclose(f);
	return found ? found : listener;
}

/* --- the whole process ------------------------------------------------------------ */

static int cmp_tid(const void *a, const void *b)
{
	const struct bp_dump_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int bp_dump__take(pid_t pid, struct bp_dump **out)
{
	struct ctx c = { .pid = pid };
	struct bp_dump_rec *recs = NULL;
	struct bp_procinfo pi = { 0 };
	struct want *w = NULL;
	struct bp_dump *d;
	struct timespec now;
	uint32_t nr = 0, nw = 0, i, left;
	char path[64];
	const char *ver;
	bool ft;
	int err;

	*out = NULL;
	if (pid <= 0) {
		bp_err("no process %d", pid);
		return -ESRCH;
	}
	err = check_access(pid);
	if (err)
		return err;
	d = calloc(1, sizeof(*d));
	c.prof = bp_profile__new();
	c.syms = bp_syms__new(NULL);
	if (!d || !c.prof || !c.syms) {
		err = -ENOMEM;
		goto fail;
	}
	d->pid = (uint32_t)pid;
	d->prof = c.prof;
	/* what names the frames is read while the process lives, before the snapshot */
	bp_syms__load_kernel(c.syms);
	c.nr_sites = bp_session_site_ranges(c.syms, c.sites, BP_SITE_RANGES, &left);
	bp_syms__snapshot(c.syms, pid);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	bp_procmaps__read(path, add_xmap, &c.maps, NULL);
	c.py = bp_python__new(NULL, "/proc");
	if (c.py && !bp_python__attach(c.py, pid)) {
		bp_python__set_profile(c.py, c.prof);
		bp_python__gil(c.py, pid, &c.gil_lo, &c.gil_hi);
		ver = bp_python__version(c.py, pid, &ft);
		if (ver)
			snprintf(d->python, sizeof(d->python), "%s", ver);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	d->taken_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	err = snapshot(pid, &recs, &nr);
	if (err)
		goto fail;
	if (!nr) {
		bp_err("no process %d: it exited", pid);
		err = -ESRCH;
		goto fail;
	}
	if (!bp_procinfo_read("/proc", pid, &pi)) {
		memcpy(d->comm, pi.comm, sizeof(d->comm));
		d->cmdline = pi.cmdline;
		pi.cmdline = NULL;
	}
	d->threads = calloc(nr, sizeof(*d->threads));
	w = calloc(nr, sizeof(*w));
	if (!d->threads || !w) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < nr; i++) {
		struct bp_dump_thread *t = &d->threads[d->nr_threads];

		err = thread_of(&c, &recs[i], t);
		d->nr_threads++;
		if (err)
			goto fail;
		if (!d->comm[0] && t->tid == (uint32_t)pid)
			memcpy(d->comm, t->comm, sizeof(d->comm));
		if (t->fd < 0 || (t->fd_kind != BP_FD_PIPE && t->fd_kind != BP_FD_UNIX &&
				  t->fd_kind != BP_FD_INET))
			continue;
		if (t->fd_kind == BP_FD_INET)
			recs[i].peer_ino = tcp_peer_ino(pid, &recs[i]);
		w[nw].peer = &t->peer;
		w[nw].self = (uint32_t)pid;
		w[nw].self_fd = t->fd;
		w[nw].is_pipe = t->fd_kind == BP_FD_PIPE;
		w[nw].ino = w[nw].is_pipe ? recs[i].fd_ino : recs[i].peer_ino;
		/* a FIFO with a name (an anonymous pipe lives in pipefs, "pipe:[N]") */
		if (w[nw].is_pipe && t->fd_path && t->fd_path[0] == '/') {
			w[nw].named = true;
			w[nw].dev = makedev(recs[i].fd_dev >> 20, recs[i].fd_dev & 0xfffff);
		}
		w[nw].acc = !w[nw].is_pipe ? -1 : t->dir == BP_DIR_IN ? 1 : t->dir == BP_DIR_OUT ? 0 : -1;
		if (w[nw].ino)
			nw++;
	}
	find_peers(w, nw);
	qsort(d->threads, d->nr_threads, sizeof(*d->threads), cmp_tid);
	*out = d;
	d = NULL;
	err = 0;
fail:
	free(w);
	free(recs);
	bp_procinfo_free(&pi);
	maps_free(&c.maps);
	bp_python__free(c.py);
	bp_syms__free(c.syms);
	if (d) {
		d->prof = c.prof;
		bp_dump__free(d);
	} else if (err) {
		bp_profile__free(c.prof);
	}
	return err;
}

void bp_dump__free(struct bp_dump *d)
{
	uint32_t i;

	if (!d)
		return;
	for (i = 0; i < d->nr_threads; i++) {
		free(d->threads[i].frames);
		free(d->threads[i].native);
		free(d->threads[i].native_at);
		free(d->threads[i].fd_path);
		free(d->threads[i].remote);
	}
	free(d->threads);
	free(d->cmdline);
	bp_profile__free(d->prof);
	free(d);
}
