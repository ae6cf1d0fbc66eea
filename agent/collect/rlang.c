// SPDX-License-Identifier: GPL-2.0
/*
 * R processes, from the first look at a process to its frames in the
 * profile. docs/r.md has the design; the context layout is data in
 * symbolize/r_layout.c, checked against each libR before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "collect/loader.h"
#include "collect/loadwait.h"
#include "collect/rlang.h"
#include "model/profile.h"
#include "proc/procinfo.h"
#include "proc/procmaps.h"
#include "rstack.h"
#include "symbolize/python_elf.h"
#include "symbolize/r_layout.h"
#include "util/htab.h"
#include "util/log.h"

#define FILES_MAX		32
#define MAX_LOADS		8
/*
 * An R whose globals are not made yet (still starting) is looked at again at
 * every tick (PY_LOADER_POLL_MS in a recording, 100 ms in the agent) for this
 * long. At every drain only, an R sampled before its globals existed was
 * looked at again a second later: a run shorter than that was never walked
 * (1 in 4 runs of test_r_counters' 0.8-s Rscript had no R frames).
 */
#define PENDING_MAX_NS		(60ULL * 1000 * 1000 * 1000)
/* names and files kept per run, at most */
#define NAMES_MAX		(256 * 1024)
#define FILE_NAME_MAX		1024

enum file_kind {
	FILE_OTHER = 0,		/* not R */
	FILE_R,			/* an R we know, its layout checked */
	FILE_UNSUPPORTED,	/* an R we do not know: why says which */
};

struct r_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint8_t kind;
	bool warned;
	char version[24];
	char why[200];
	struct bp_r_facts facts;
	const struct bp_r_layout *row;
	uint64_t load_off[MAX_LOADS], load_vaddr[MAX_LOADS], load_filesz[MAX_LOADS];
	size_t nr_loads;
};

enum proc_state {
	PROC_NEW = 0,
	PROC_NONE,		/* not R, or one we cannot walk */
	PROC_PENDING,		/* R, its globals not made yet: looked at again at ticks */
	PROC_ATTACHED,
};

struct r_proc {
	uint32_t pid;
	uint8_t state;
	bool exited, retiring;
	uint64_t pending_ns;	/* when it became PROC_PENDING */
	struct bp_loadwait lw;	/* NEW, waiting for the loader to map libR.so or libc */
	char version[24];
	char *module, *path;
	uint64_t bias;
	struct r_file *file;
	struct bp_r_proc bpf;
};

/* a name or a source file, by (pid, address, kind) */
struct r_name {
	uint64_t addr;
	uint32_t pid;
	uint32_t kind;
	char *s;
};

struct bp_rlang {
	struct bp_loader *l;
	int procs_fd;
	char *proc_root;
	struct bp_profile *prof;
	struct bp_htab proc_h;
	struct r_proc **procs;
	uint32_t nr_procs, cap_procs;
	struct r_file files[FILES_MAX];
	uint32_t nr_files, next_file;
	struct bp_htab name_h;
	struct r_name *names;
	uint32_t nr_names, cap_names;
	struct bp_rlang_stats st;
};

/* --- processes ------------------------------------------------------------ */

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct bp_rlang *)ctx)->procs[idx]->pid == *(const uint32_t *)key;
}

static struct r_proc *proc_find(struct bp_rlang *r, uint32_t pid)
{
	uint32_t idx;

	if (bp_htab_find(&r->proc_h, bp_hash_u64(pid), proc_eq, r, &pid, &idx))
		return NULL;
	return r->procs[idx];
}

static struct r_proc *proc_get(struct bp_rlang *r, uint32_t pid)
{
	struct r_proc *p = proc_find(r, pid);

	if (p)
		return p;
	if (r->nr_procs == r->cap_procs) {
		uint32_t ncap = r->cap_procs ? r->cap_procs * 2 : 64;
		struct r_proc **n = realloc(r->procs, ncap * sizeof(*n));

		if (!n)
			return NULL;
		r->procs = n;
		r->cap_procs = ncap;
	}
	p = calloc(1, sizeof(*p));
	if (!p || bp_htab_insert(&r->proc_h, bp_hash_u64(pid), r->nr_procs)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	r->procs[r->nr_procs++] = p;
	return p;
}

static void proc_reset(struct r_proc *p)
{
	uint32_t pid = p->pid;

	free(p->module);
	free(p->path);
	memset(p, 0, sizeof(*p));
	p->pid = pid;
}

/* --- names ---------------------------------------------------------------- */

static uint64_t name_hash(uint32_t pid, uint64_t addr, uint32_t kind)
{
	return bp_hash_u64(addr ^ ((uint64_t)pid << 40) ^ ((uint64_t)kind << 62));
}

static bool name_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct r_name *a = &((const struct bp_rlang *)ctx)->names[idx], *b = key;

	return a->addr == b->addr && a->pid == b->pid && a->kind == b->kind;
}

static const char *name_find(struct bp_rlang *r, uint32_t pid, uint64_t addr, uint32_t kind)
{
	struct r_name k = { .addr = addr, .pid = pid, .kind = kind };
	uint32_t idx;

	if (bp_htab_find(&r->name_h, name_hash(pid, addr, kind), name_eq, r, &k, &idx))
		return NULL;
	return r->names[idx].s;
}

static void name_put(struct bp_rlang *r, uint32_t pid, uint64_t addr, uint32_t kind,
		     const char *s, size_t len)
{
	struct r_name *n;

	if (name_find(r, pid, addr, kind) || r->nr_names >= NAMES_MAX)
		return;
	if (r->nr_names == r->cap_names) {
		uint32_t ncap = r->cap_names ? r->cap_names * 2 : 1024;
		struct r_name *nn = realloc(r->names, ncap * sizeof(*nn));

		if (!nn)
			return;
		r->names = nn;
		r->cap_names = ncap;
	}
	n = &r->names[r->nr_names];
	n->s = strndup(s, len);
	if (!n->s)
		return;
	n->addr = addr;
	n->pid = pid;
	n->kind = kind;
	if (bp_htab_insert(&r->name_h, name_hash(pid, addr, kind), r->nr_names)) {
		free(n->s);
		return;
	}
	r->nr_names++;
}

/* a process's names go with it (its exit or exec): the table stays bounded */
static void names_drop(struct bp_rlang *r, uint32_t pid)
{
	uint32_t i, n = 0;

	for (i = 0; i < r->nr_names; i++) {
		if (r->names[i].pid == pid)
			free(r->names[i].s);
		else
			r->names[n++] = r->names[i];
	}
	if (n == r->nr_names)
		return;
	r->nr_names = n;
	bp_htab_clear(&r->name_h);
	for (i = 0; i < n; i++)
		bp_htab_insert(&r->name_h, name_hash(r->names[i].pid, r->names[i].addr,
						     r->names[i].kind), i);
}

/* --- reading the process and its files ------------------------------------ */

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t mem_u64(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	if (!addr || mem_read(pid, addr, &v, sizeof(v)))
		return 0;
	return v;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static struct r_file *file_find(struct bp_rlang *r, const struct stat *st)
{
	uint32_t i;

	for (i = 0; i < r->nr_files; i++) {
		struct r_file *f = &r->files[i];

		if (f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
		    f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return f;
	}
	return NULL;
}

static struct r_file *file_slot(struct bp_rlang *r, const struct stat *st)
{
	struct r_file *f;

	if (r->nr_files < FILES_MAX)
		f = &r->files[r->nr_files++];
	else
		f = &r->files[r->next_file++ % FILES_MAX];
	memset(f, 0, sizeof(*f));
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	return f;
}

/*
 * R's version: "Version:" of its base package's DESCRIPTION, in R_HOME,
 * which is the directory above libR's lib/ (or the executable's bin/exec/).
 * Read in the process's own mount namespace.
 */
static int r_version(struct bp_rlang *r, pid_t pid, const char *path, char *out, size_t len)
{
	char home[4096], file[4600], line[256];
	const char *up = strstr(path, "/bin/exec/");
	size_t n;
	FILE *fp;
	int err = -ENOENT;

	if (up) {
		n = up - path;
	} else {
		const char *s = strrchr(path, '/');

		if (!s)
			return -ENOENT;
		n = s - path;
		while (n > 0 && path[n - 1] != '/')
			n--;
		if (n > 0)
			n--;
	}
	snprintf(home, sizeof(home), "%.*s", (int)n, path);
	snprintf(file, sizeof(file), "%s/%d/root%s/library/base/DESCRIPTION", r->proc_root, pid,
		 home);
	fp = fopen(file, "re");
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "Version:", 8)) {
			char *v = line + 8;

			v += strspn(v, " \t");
			v[strcspn(v, " \t\r\n")] = '\0';
			snprintf(out, len, "%s", v);
			err = *v ? 0 : -ENOENT;
			break;
		}
	}
	fclose(fp);
	return err;
}

static void look_r(struct bp_rlang *r, struct r_file *f, struct bp_pyelf *e, pid_t pid,
		   const char *path)
{
	unsigned int major = 0, minor = 0;
	char why[170];
	int err;

	err = bp_r_facts(e, &f->facts);
	if (err == -ENOENT)
		return;
	f->kind = FILE_UNSUPPORTED;
	if (r_version(r, pid, path, f->version, sizeof(f->version)) ||
	    sscanf(f->version, "%u.%u", &major, &minor) != 2) {
		snprintf(f->why, sizeof(f->why), "R of an unknown version (no "
			 "library/base/DESCRIPTION beside it)");
		return;
	}
	f->row = bp_r_layout_find(major, minor);
	if (!f->row) {
		snprintf(f->why, sizeof(f->why), "R %s is not supported (boundprof knows R %s)",
			 f->version, bp_r_layout_known());
		return;
	}
	if (err) {
		snprintf(f->why, sizeof(f->why), "R %s: its R_GetCurrentSrcref is not the code "
			 "boundprof knows", f->version);
		return;
	}
	if (bp_r_layout_check(e, &f->facts, f->row, why, sizeof(why))) {
		snprintf(f->why, sizeof(f->why), "R %.20s: %.170s", f->version, why);
		return;
	}
	f->kind = FILE_R;
}

struct scan {
	struct bp_rlang *r;
	pid_t pid;
	ino_t exe_ino;
	struct r_file *file;
	uint64_t bias;
	char path[4096];
	uint64_t last_ino;
	bool exe_r;		/* the executable is named R */
	bool libc;		/* libc (or musl's loader) is mapped */
};

static int scan_map(const struct bp_maps_line *l, void *ctx)
{
	struct scan *s = ctx;
	const char *base;
	struct r_file *f;
	struct bp_pyelf *e;
	struct stat st;
	char mf[128];
	size_t i;
	int fd;

	if (s->file || !l->path_len || l->path[0] != '/' || !l->inode || l->inode == s->last_ino)
		return 0;
	base = base_name(l->path);
	if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	    !strncmp(base, "ld-musl", 7))
		s->libc = true;
	if (l->inode == s->exe_ino && !strcmp(base, "R"))
		s->exe_r = true;
	/* libR.so, or an R built without it: the executable exports the symbols */
	if (strcmp(base, "libR.so") && !(l->inode == s->exe_ino && !strcmp(base, "R")))
		return 0;
	s->last_ino = l->inode;
	snprintf(mf, sizeof(mf), "%s/%d/map_files/%llx-%llx", s->r->proc_root, s->pid,
		 (unsigned long long)l->start, (unsigned long long)l->end);
	fd = open(mf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != l->inode) {
		close(fd);
		return 0;
	}
	snprintf(s->path, sizeof(s->path), "%.*s", (int)l->path_len, l->path);
	f = file_find(s->r, &st);
	if (f) {
		close(fd);
	} else {
		f = file_slot(s->r, &st);
		if (bp_pyelf__open(fd, &e))
			return 0;
		look_r(s->r, f, e, s->pid, s->path);
		f->nr_loads = bp_pyelf__loads(e, f->load_off, f->load_vaddr, f->load_filesz,
					      MAX_LOADS);
		bp_pyelf__free(e);
	}
	if (f->kind == FILE_OTHER)
		return 0;
	for (i = 0; i < f->nr_loads; i++)
		if (l->pgoff >= (f->load_off[i] & ~4095ULL) &&
		    l->pgoff < f->load_off[i] + (f->load_filesz[i] ? f->load_filesz[i] : 1))
			break;
	if (i == f->nr_loads)
		return 0;
	s->bias = l->start - (l->pgoff - f->load_off[i] + f->load_vaddr[i]);
	s->file = f;
	return 0;
}

/*
 * The values of R's global SEXPs (R_NilValue, the symbols): made when R
 * starts, so an R sampled while it starts is looked at again later.
 */
static int read_globals(struct r_proc *p)
{
	const struct bp_r_facts *fa = &p->file->facts;
	uint64_t b = p->bias;

	p->bpf.nil = mem_u64(p->pid, b + fa->nil);
	p->bpf.in_bc = mem_u64(p->pid, b + fa->in_bc);
	p->bpf.srcfile_sym = mem_u64(p->pid, b + fa->srcfile_sym);
	p->bpf.dcolon = mem_u64(p->pid, b + fa->dcolon);
	p->bpf.tcolon = mem_u64(p->pid, b + fa->tcolon);
	p->bpf.dollar = mem_u64(p->pid, b + fa->dollar);
	if (!p->bpf.nil || !p->bpf.in_bc || !p->bpf.srcfile_sym)
		return -EAGAIN;
	return 0;
}

static int publish(struct bp_rlang *r, struct r_proc *p)
{
	uint32_t key = p->pid;
	int err = bp_loader__open_interp(r->l, true);

	if (err)
		return err;
	if (bpf_map_update_elem(r->procs_fd, &key, &p->bpf, BPF_ANY)) {
		err = -errno;
		bp_dbg("pid %u: cannot hand R to the walker: %s", p->pid, strerror(-err));
		return err;
	}
	bp_loader__interp_added(r->l);
	return 0;
}

/* true while the loader may still be at work: the process is looked at again */
static bool still_loading(struct bp_rlang *r, struct r_proc *p)
{
	enum bp_loadwait_res res = bp_loadwait__still(&p->lw, bp_now_ns());

	if (res == BP_LOADWAIT_NEW)
		r->st.loader_waits++;
	return res != BP_LOADWAIT_GAVE_UP;
}

bool bp_rlang__waiting(const struct bp_rlang *r)
{
	uint32_t i;

	for (i = 0; r && i < r->nr_procs; i++)
		if ((r->procs[i]->lw.waiting || r->procs[i]->state == PROC_PENDING) &&
		    !r->procs[i]->exited)
			return true;
	return false;
}

int bp_rlang__attach(struct bp_rlang *r, pid_t pid)
{
	struct scan s = { .r = r, .pid = pid };
	struct r_proc *p = proc_get(r, pid);
	const struct bp_r_facts *fa;
	struct r_file *f;
	char path[128];
	struct stat st;
	int err;

	if (!p)
		return -ENOMEM;
	if (p->state != PROC_NEW || p->exited || !r->l->r_walk)
		return 0;
	snprintf(path, sizeof(path), "%s/%d/maps", r->proc_root, pid);
	/* one stat of its exe serves both walkers (procmaps.h) */
	if (!bp_procmaps__exe_stat(path, &st))
		s.exe_ino = st.st_ino;
	err = bp_procmaps__read(path, scan_map, &s, NULL);
	/*
	 * An R executable's first sample can come while ld.so is still
	 * mapping its libraries: libR.so (listed before libc) not there yet.
	 * It is looked at again at every tick until it is, or libc is (then
	 * libR.so will not come).
	 */
	if (!err && !s.file && s.exe_r && !s.libc && still_loading(r, p))
		return 0;
	bp_loadwait__done(&p->lw);
	p->state = PROC_NONE;
	if (err || !s.file)
		return 0;
	f = s.file;
	if (f->kind == FILE_UNSUPPORTED) {
		if (!f->warned) {
			bp_warn("pid %d (%s): %s: native frames only", pid, base_name(s.path), f->why);
			f->warned = true;
		}
		r->st.unsupported++;
		return 0;
	}
	fa = &f->facts;
	p->file = f;
	p->bias = s.bias;
	memcpy(p->version, f->version, sizeof(p->version));
	p->module = strdup(base_name(s.path));
	p->path = strdup(s.path);
	if (!p->module || !p->path)
		return -ENOMEM;
	memset(&p->bpf, 0, sizeof(p->bpf));
	bp_r_layout_to_proc(f->row, &p->bpf);
	p->bpf.global_ctx = s.bias + fa->global_ctx;
	p->bpf.srcref = s.bias + fa->srcref;
	if (fa->bc_body) {
		p->bpf.bc_body = s.bias + fa->bc_body;
		p->bpf.bc_pc = s.bias + fa->bc_pc;
	}
	if (read_globals(p)) {
		p->state = PROC_PENDING;
		p->pending_ns = bp_now_ns();
		return 0;
	}
	err = publish(r, p);
	if (err)
		return err;
	p->state = PROC_ATTACHED;
	r->st.attached++;
	bp_dbg("pid %d: R %s in %s, walking its frames", pid, p->version, p->path);
	return 0;
}

void bp_rlang__tick(struct bp_rlang *r)
{
	uint32_t i;

	for (i = 0; i < r->nr_procs; i++) {
		struct r_proc *p = r->procs[i];

		if (!p->pid || p->exited)
			continue;
		if (p->state == PROC_NEW && p->lw.waiting) {
			bp_rlang__attach(r, p->pid);
			continue;
		}
		if (p->state != PROC_PENDING)
			continue;
		if (!read_globals(p) && !publish(r, p)) {
			p->state = PROC_ATTACHED;
			r->st.attached++;
			bp_dbg("pid %u: R %s in %s, walking its frames", p->pid, p->version, p->path);
		} else if (bp_now_ns() - p->pending_ns > PENDING_MAX_NS) {
			p->state = PROC_NONE;
		}
	}
}

void bp_rlang__exec(struct bp_rlang *r, pid_t pid)
{
	struct r_proc *p = proc_find(r, pid);

	if (p) {
		if (p->module)
			names_drop(r, pid);
		proc_reset(p);
	}
}

bool bp_rlang__walks(struct bp_rlang *r, pid_t pid)
{
	struct r_proc *p = r ? proc_find(r, pid) : NULL;

	return p && p->module;
}

void bp_rlang__exited(struct bp_rlang *r, pid_t pid)
{
	struct r_proc *p = proc_find(r, pid);

	if (p)
		p->exited = true;
}

void bp_rlang__retire(struct bp_rlang *r)
{
	uint32_t i, n = 0;
	char path[64];

	for (i = 0; i < r->nr_procs; i++) {
		struct r_proc *p = r->procs[i];

		if (p->retiring) {
			if (p->module)
				names_drop(r, p->pid);
			proc_reset(p);
			free(p);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%u", r->proc_root, p->pid);
		if (p->exited || (access(path, F_OK) && errno == ENOENT))
			p->retiring = p->exited = true;
		r->procs[n++] = p;
	}
	if (n == r->nr_procs)
		return;
	r->nr_procs = n;
	bp_htab_clear(&r->proc_h);
	for (i = 0; i < n; i++)
		bp_htab_insert(&r->proc_h, bp_hash_u64(r->procs[i]->pid), i);
}

const char *bp_rlang__version(struct bp_rlang *r, pid_t pid)
{
	struct r_proc *p = proc_find(r, pid);

	return p && p->state == PROC_ATTACHED ? p->version : NULL;
}

/* --- events ----------------------------------------------------------------- */

bool bp_rlang__is_event(const void *rec, size_t len)
{
	uint32_t kind;

	if (len < sizeof(kind))
		return false;
	memcpy(&kind, rec, sizeof(kind));
	return kind == BP_R_EV_SYM || kind == BP_R_EV_SRCFILE;
}

/* the value of a variable named name in an environment's frame or hash table */
static uint64_t env_lookup(pid_t pid, uint64_t env, const char *name)
{
	uint64_t frame = mem_u64(pid, env + BP_R_CAR), tab = mem_u64(pid, env + BP_R_TAG);
	uint64_t nil = 0, chains[64], nb = 0, i;
	size_t want = strlen(name) + 1;

	/* R_NilValue is the frame's CDR at its end; a hashed env's frame is R_NilValue */
	if (tab && mem_read(pid, tab, &nil, 1) == 0 && ((uint8_t)nil & BP_R_TYPE_MASK) == BP_R_VECSXP) {
		nb = mem_u64(pid, tab + BP_R_VLEN);
		if (nb > 64)
			nb = 64;
		if (nb && mem_read(pid, tab + BP_R_VDATA, chains, nb * 8))
			nb = 0;
	}
	for (i = 0; i <= nb; i++) {
		uint64_t node = i < nb ? chains[i] : frame;
		int steps;

		for (steps = 0; node && steps < 256; steps++) {
			uint64_t cell[3], pname;
			char text[32];
			uint8_t t = 0;

			if (mem_read(pid, node, &t, 1) || (t & BP_R_TYPE_MASK) != BP_R_LISTSXP ||
			    mem_read(pid, node + BP_R_CAR, cell, sizeof(cell)))
				break;
			pname = mem_u64(pid, cell[2] + BP_R_CAR);
			if (pname && want <= sizeof(text) &&
			    !mem_read(pid, pname + BP_R_VDATA, text, want) && !memcmp(text, name, want))
				return cell[0];
			node = cell[1];
		}
	}
	return 0;
}

/* a srcfile environment's file name (srcfile(), srcfilecopy()): its "filename" */
static void read_srcfile(struct bp_rlang *r, uint32_t pid, uint64_t env)
{
	uint64_t v = env_lookup(pid, env, "filename"), ch;
	char text[FILE_NAME_MAX];
	uint8_t t = 0;

	if (!v || mem_read(pid, v, &t, 1) || (t & BP_R_TYPE_MASK) != 16 /* STRSXP */ ||
	    (t & BP_R_ALTREP))
		return;
	ch = mem_u64(pid, v + BP_R_VDATA);
	if (!ch)
		return;
	memset(text, 0, sizeof(text));
	/* a page boundary may cut a long read: the name is short, try less */
	if (mem_read(pid, ch + BP_R_VDATA, text, sizeof(text) - 1) &&
	    mem_read(pid, ch + BP_R_VDATA, text, 256))
		return;
	text[sizeof(text) - 1] = '\0';
	if (!text[0])
		return;
	name_put(r, pid, env, BP_R_EV_SRCFILE, text, strlen(text));
	r->st.files++;
}

void bp_rlang__on_event(void *ctx, const void *rec, size_t len)
{
	struct bp_rlang *r = ctx;
	struct bp_r_ev ev;

	if (len < sizeof(ev))
		return;
	memcpy(&ev, rec, sizeof(ev));
	if (ev.kind == BP_R_EV_SYM) {
		if (ev.len >= BP_R_NAME_MAX)
			ev.len = BP_R_NAME_MAX - 1;
		name_put(r, ev.tgid, ev.addr, BP_R_EV_SYM, (const char *)ev.name, ev.len);
		r->st.names++;
	} else if (ev.kind == BP_R_EV_SRCFILE) {
		/* read now, while the process lives: an Rscript may end before the drain */
		read_srcfile(r, ev.tgid, ev.addr);
	}
}

/* --- frames ----------------------------------------------------------------- */

static int64_t r_frame(struct bp_rlang *r, struct r_proc *p, uint64_t w, uint64_t srcfile)
{
	struct bp_frame f = { .python = true };
	uint64_t sym = bp_r_word_sym(w);

	f.module = p->module;
	f.path = p->path;
	if (!sym) {
		f.name = "<Anonymous>";
	} else {
		f.name = name_find(r, p->pid, sym, BP_R_EV_SYM);
		if (!f.name) {
			f.name = "[R]";
			r->st.frames_unnamed++;
		}
	}
	f.file = srcfile ? name_find(r, p->pid, srcfile, BP_R_EV_SRCFILE) : NULL;
	f.line = f.file ? bp_r_word_line(w) : 0;
	return bp_profile__frame(r->prof, &f);
}

int bp_rlang__merge(struct bp_rlang *r, uint32_t pid, const struct bp_stack *rs,
		    const uint32_t *nat, uint32_t nn, uint32_t *out, uint32_t max)
{
	struct r_proc *p = proc_find(r, pid);
	uint32_t ids[BP_R_FRAMES_MAX], nr = 0, i, n = 0, at = 0;
	int64_t id;

	if (p && p->module && (rs->flags & BP_STACK_R))
		nr = rs->nr / 2 < BP_R_FRAMES_MAX ? rs->nr / 2 : BP_R_FRAMES_MAX;
	for (i = 0; i < nr; i++) {
		id = r_frame(r, p, rs->ips[2 * i], rs->ips[2 * i + 1]);
		if (id < 0)
			return (int)id;
		ids[i] = (uint32_t)id;
	}
	/* after the innermost frame of libR: the interpreter runs the R frames */
	for (i = 0; nr && i < nn; i++) {
		const struct bp_frame *f = &r->prof->frames[nat[i]];

		if (!f->kernel && !f->python && f->module && !strcmp(f->module, p->module))
			at = i + 1;
	}
	for (i = 0; i < at && n < max; i++)
		out[n++] = nat[i];
	for (i = nr; i-- > 0 && n < max;)
		out[n++] = ids[i];
	for (i = at; i < nn && n < max; i++)
		out[n++] = nat[i];
	return (int)n;
}

/* --- life cycle ------------------------------------------------------------- */

void bp_rlang__set_profile(struct bp_rlang *r, struct bp_profile *prof)
{
	r->prof = prof;
}

struct bp_rlang *bp_rlang__new(struct bp_loader *l, const char *proc_root)
{
	struct bp_rlang *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->l = l;
	r->procs_fd = bp_loader__r_procs_fd(l);
	r->proc_root = strdup(proc_root ? proc_root : "/proc");
	if (!r->proc_root) {
		free(r);
		return NULL;
	}
	return r;
}

void bp_rlang__free(struct bp_rlang *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->nr_procs; i++) {
		proc_reset(r->procs[i]);
		free(r->procs[i]);
	}
	free(r->procs);
	bp_htab_free(&r->proc_h);
	for (i = 0; i < r->nr_names; i++)
		free(r->names[i].s);
	free(r->names);
	bp_htab_free(&r->name_h);
	free(r->proc_root);
	free(r);
}

const struct bp_rlang_stats *bp_rlang__stats(const struct bp_rlang *r)
{
	return &r->st;
}
