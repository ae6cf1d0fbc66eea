// SPDX-License-Identifier: GPL-2.0
/*
 * Python processes, from the first look at a process to its frames in the
 * profile. See docs/python.md for the design; the offsets are data in
 * symbolize/python_layout.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "collect/loader.h"
#include "collect/loadwait.h"
#include "collect/python.h"
#include "model/profile.h"
#include "proc/procinfo.h"
#include "proc/procmaps.h"
#include "python.h"
#include "symbolize/python_code.h"
#include "symbolize/python_elf.h"
#include "symbolize/python_layout.h"
#include "util/htab.h"
#include "util/log.h"
#include "util/safeopen.h"

/* files looked at, kept by identity: most processes run the same few */
#define FILES_MAX		256
/* code objects kept per process, and their line tables' bytes */
#define CODES_MAX		(64 * 1024)
#define CODE_BYTES_MAX		(64ULL * 1024 * 1024)
/* a line table read again from the process, at most */
#define TABLE_REFETCH_MAX	(1024 * 1024)
/* an interpreter still starting (3.12+: its GIL not made yet) is retried this often */
#define RETRIES_MAX		30
#define MAX_LOADS		8

enum file_kind {
	FILE_OTHER = 0,		/* no interpreter in it */
	FILE_PYTHON,		/* an interpreter we know */
	FILE_UNSUPPORTED,	/* an interpreter we do not know: why says which */
	FILE_LIBC,		/* glibc's thread-specific data, understood */
	FILE_LIBC_UNKNOWN,	/* a libc whose thread-specific data we do not know */
};

struct py_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint8_t kind;
	bool warned;
	/* FILE_PYTHON */
	uint32_t hexversion;
	char version[24];
	struct bp_py_layout layout;	/* a copy: 3.13's comes from the file */
	bool free_threaded;
	uint64_t runtime, none, code_type, key36;	/* vaddrs */
	uint64_t gil_lo, gil_hi;	/* vaddrs, where the GIL is static (<= 3.11) */
	/* FILE_LIBC */
	uint32_t tsd_off, tsd_size;
	char why[128];
	/* its loadable segments, for where a mapping puts it */
	uint64_t load_off[MAX_LOADS], load_vaddr[MAX_LOADS], load_filesz[MAX_LOADS];
	size_t nr_loads;
};

struct py_code {
	uint64_t addr;
	int32_t firstlineno;
	bool refetched;
	char *name;			/* UTF-8; name and file share one allocation */
	char *file;
	uint64_t table_addr;
	uint64_t table_size;		/* of the table in the process */
	uint32_t table_len;		/* bytes we have */
	uint8_t *table;
};

enum proc_state {
	PROC_NEW = 0,
	PROC_NONE,		/* not CPython, or one we cannot walk */
	PROC_PENDING,		/* CPython, its GIL not yet found: retried at ticks */
	PROC_ATTACHED,
};

struct py_proc {
	uint32_t pid;		/* 0: dropped */
	uint8_t state;
	uint8_t retries;
	struct bp_loadwait lw;	/* NEW, waiting for the loader to map the interpreter or libc */
	bool exited;
	bool retiring;
	bool free_threaded;
	uint8_t minor;
	char version[24];
	char *module;		/* the interpreter's file: its base name and path */
	char *path;
	uint64_t bias;		/* where the interpreter's file is loaded */
	uint64_t code_type;	/* &PyCode_Type in the process */
	const struct bp_py_layout *layout_row;
	struct bp_py_layout layout;
	struct bp_py_proc bpf;
	/* code objects by address */
	struct bp_htab code_h;
	struct py_code **codes;
	uint32_t nr_codes, cap_codes;
	uint64_t code_bytes;
};

/* Python frame ids in the current profile, by (pid, word without its run bit) */
struct frame_cache {
	struct bp_htab h;
	uint64_t *words;
	uint32_t *pids;
	uint32_t *ids;
	uint32_t len, cap;
};

struct bp_python {
	struct bp_loader *l;
	int procs_fd;
	char *proc_root;
	struct bp_profile *prof;
	struct bp_htab proc_h;
	struct py_proc **procs;
	uint32_t nr_procs, cap_procs;
	struct py_file files[FILES_MAX];
	uint32_t nr_files, next_file;
	struct frame_cache fc;
	struct bp_python_stats st;
};

/* --- processes ------------------------------------------------------------ */

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct bp_python *)ctx)->procs[idx]->pid == *(const uint32_t *)key;
}

static struct py_proc *proc_find(struct bp_python *py, uint32_t pid)
{
	uint32_t idx;

	if (bp_htab_find(&py->proc_h, bp_hash_u64(pid), proc_eq, py, &pid, &idx))
		return NULL;
	return py->procs[idx];
}

static struct py_proc *proc_get(struct bp_python *py, uint32_t pid)
{
	struct py_proc *p = proc_find(py, pid);

	if (p)
		return p;
	if (py->nr_procs == py->cap_procs) {
		uint32_t ncap = py->cap_procs ? py->cap_procs * 2 : 64;
		struct py_proc **n = realloc(py->procs, ncap * sizeof(*n));

		if (!n)
			return NULL;
		py->procs = n;
		py->cap_procs = ncap;
	}
	p = calloc(1, sizeof(*p));
	if (!p || bp_htab_insert(&py->proc_h, bp_hash_u64(pid), py->nr_procs)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	py->procs[py->nr_procs++] = p;
	return p;
}

static void codes_free(struct py_proc *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_codes; i++) {
		free(p->codes[i]->table);
		free(p->codes[i]);
	}
	free(p->codes);
	bp_htab_free(&p->code_h);
	p->codes = NULL;
	p->nr_codes = p->cap_codes = 0;
	p->code_bytes = 0;
}

/* back to "never looked at", as after an exec */
static void proc_reset(struct py_proc *p)
{
	uint32_t pid = p->pid;

	codes_free(p);
	free(p->module);
	free(p->path);
	memset(p, 0, sizeof(*p));
	p->pid = pid;
}

/* --- reading the process and its files ------------------------------------ */

static int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* "libpython3.11.so.1.0", "python3.11", "libpython3.6m.so": 3.minor from the name */
static int minor_from_name(const char *base)
{
	const char *p = NULL;
	unsigned int major, minor;

	if (has_prefix(base, "libpython"))
		p = base + 9;
	else if (has_prefix(base, "python"))
		p = base + 6;
	if (!p || sscanf(p, "%u.%u", &major, &minor) != 2)
		return -1;
	return major == 3 ? (int)minor : (int)(1000 + major);
}

static struct py_file *file_find(struct bp_python *py, const struct stat *st)
{
	uint32_t i;

	for (i = 0; i < py->nr_files; i++) {
		struct py_file *f = &py->files[i];

		if (f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
		    f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return f;
	}
	return NULL;
}

static struct py_file *file_slot(struct bp_python *py, const struct stat *st)
{
	struct py_file *f;

	if (py->nr_files < FILES_MAX)
		f = &py->files[py->nr_files++];
	else
		f = &py->files[py->next_file++ % FILES_MAX];
	memset(f, 0, sizeof(*f));
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	return f;
}

static void unsupported(struct py_file *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void unsupported(struct py_file *f, const char *fmt, ...)
{
	va_list ap;

	f->kind = FILE_UNSUPPORTED;
	va_start(ap, fmt);
	vsnprintf(f->why, sizeof(f->why), fmt, ap);
	va_end(ap);
}

/* the interpreter in a file, or why not */
static void look_python(struct py_file *f, struct bp_pyelf *e, const char *base, bool named)
{
	uint64_t a, sz, basicsize = 0, hex = 0;
	const struct bp_py_layout *row;
	int minor = -1;

	/* a file not named for Python is one only if it exports the interpreter loop */
	if (!named && bp_pyelf__dynsym(e, "_PyEval_EvalFrameDefault", &a, &sz))
		return;
	if (bp_pyelf__sym(e, "_PyEval_EvalFrameDefault", &a, &sz)) {
		/* Python 2's loop is PyEval_EvalFrameEx: say so rather than stay silent */
		if (!bp_pyelf__sym(e, "PyEval_EvalFrameEx", &a, &sz) &&
		    minor_from_name(base) >= 1000)
			unsupported(f, "Python %d is not supported (boundprof knows 3.%d to 3.%d)",
				    minor_from_name(base) - 1000, BP_PY_MINOR_MIN, BP_PY_MINOR_MAX);
		return;
	}
	/* Py_Version (3.11+) is the version itself; before it, the file's name says it */
	if (!bp_pyelf__sym(e, "Py_Version", &a, &sz) && sz >= 4 &&
	    !bp_pyelf__read(e, a, &hex, sz < 8 ? sz : 8)) {
		hex &= 0xffffffff;
		minor = (hex >> 24) == 3 ? (int)((hex >> 16) & 0xff) : -1;
	}
	if (minor < 0)
		minor = minor_from_name(base);
	if (minor < 0 || minor >= 1000) {
		unsupported(f, "an interpreter of unknown version (%s)", base);
		return;
	}
	f->hexversion = hex ? (uint32_t)hex : (uint32_t)(3 << 24 | minor << 16);
	if (hex) {
		static const char *const level[16] = { [0xa] = "a", [0xb] = "b", [0xc] = "rc" };
		unsigned int lv = (hex >> 4) & 0xf;

		if (lv == 0xf || !level[lv])
			snprintf(f->version, sizeof(f->version), "3.%d.%d", minor,
				 (int)((hex >> 8) & 0xff));
		else
			snprintf(f->version, sizeof(f->version), "3.%d.%d%s%u", minor,
				 (int)((hex >> 8) & 0xff), level[lv], (unsigned int)(hex & 0xf));
	}
	else if (bp_pyelf__version_string(e, minor, f->version, sizeof(f->version)))
		snprintf(f->version, sizeof(f->version), "3.%d", minor);
	row = bp_py_layout(minor);
	if (!row) {
		unsupported(f, "Python %s is not supported (boundprof knows 3.%d to 3.%d)",
			    f->version, BP_PY_MINOR_MIN, BP_PY_MINOR_MAX);
		return;
	}
	f->layout = *row;
	if (minor >= 7 && bp_pyelf__sym(e, "_PyRuntime", &f->runtime, &sz)) {
		unsupported(f, "Python %s without the _PyRuntime symbol", f->version);
		return;
	}
	if (minor == 6 && bp_pyelf__sym(e, "autoTLSkey", &f->key36, &sz)) {
		unsupported(f, "Python %s without a symbol table (autoTLSkey)", f->version);
		return;
	}
	if (bp_pyelf__sym(e, "PyCode_Type", &f->code_type, &sz) ||
	    bp_pyelf__read(e, f->code_type + 32, &basicsize, 8)) {
		unsupported(f, "Python %s without PyCode_Type", f->version);
		return;
	}
	bp_pyelf__sym(e, "_Py_NoneStruct", &f->none, &sz);
	if (row->debug_offsets) {
		uint8_t dbg[BP_PY_DBG_SIZE];

		if (bp_pyelf__read(e, f->runtime, dbg, sizeof(dbg)) ||
		    bp_py_layout_from_debug(dbg, sizeof(dbg), f->hexversion, &f->layout,
					    &f->free_threaded)) {
			unsupported(f, "Python %s whose _Py_DebugOffsets we cannot read", f->version);
			return;
		}
		if (f->free_threaded) {
			unsupported(f, "Python %s free-threaded (no GIL): its frames are not "
				    "supported yet", f->version);
			return;
		}
	}
	/* a debug or trace-refs build moves every field: the code object's size tells */
	if (basicsize != f->layout.code_basicsize) {
		unsupported(f, "Python %s built with another object layout (a debug build?)",
			    f->version);
		return;
	}
	if (minor == 6) {
		/* the GIL's mutexes and conditions are statics, side by side */
		static const char *const parts[] = { "gil_cond", "gil_mutex", "switch_cond",
						     "switch_mutex" };
		unsigned int i;

		for (i = 0; i < 4; i++) {
			if (bp_pyelf__sym(e, parts[i], &a, &sz))
				continue;
			if (!f->gil_lo || a < f->gil_lo)
				f->gil_lo = a;
			if (a + sz > f->gil_hi)
				f->gil_hi = a + sz;
		}
		if (f->gil_hi - f->gil_lo > 4096)
			f->gil_lo = f->gil_hi = 0;
	} else if (f->layout.rt_gil >= 0) {
		f->gil_lo = f->runtime + f->layout.rt_gil;
		f->gil_hi = f->gil_lo + f->layout.gil_size;
	}
	f->kind = FILE_PYTHON;
}

static void look_libc(struct py_file *f, struct bp_pyelf *e)
{
	if (bp_pyelf__glibc_tsd(e, &f->tsd_off, &f->tsd_size)) {
		f->kind = FILE_LIBC_UNKNOWN;
		snprintf(f->why, sizeof(f->why), "a libc whose thread-specific data we do not know");
		return;
	}
	f->kind = FILE_LIBC;
}

static bool is_libc(const char *base)
{
	return !strcmp(base, "libc.so.6") || has_prefix(base, "libc-2.") ||
	       !strcmp(base, "libpthread.so.0") || has_prefix(base, "libpthread-2.");
}

static bool is_musl(const char *base)
{
	return has_prefix(base, "ld-musl-") || has_prefix(base, "libc.musl-");
}

/* a mapped file, opened as the process maps it (any mount namespace) */
static int open_mapped(struct bp_python *py, pid_t pid, const struct bp_maps_line *l,
		       struct stat *st)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", py->proc_root, pid,
		 (unsigned long long)l->start, (unsigned long long)l->end);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_ino != l->inode) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

struct scan {
	struct bp_python *py;
	pid_t pid;
	ino_t exe_ino;
	struct stat exe_st;	/* the executable's, when have_exe_st */
	bool have_exe_st;
	struct py_file *python, *libc;
	bool musl;
	bool exe_python;	/* the executable is named python*: libpython may come later */
	uint64_t bias;
	char path[4096];
	uint64_t last_ino;
	/* glibc's first mapping, opened only once an interpreter is found */
	bool libc_mapped, libc_pass;
	struct bp_maps_line libc_line;
	char libc_path[4096];
};

static int scan_map(const struct bp_maps_line *l, void *ctx)
{
	struct scan *s = ctx;
	const char *base;
	struct py_file *f;
	struct bp_pyelf *e;
	struct stat st;
	bool want_py, want_libc;
	int fd;

	if (!l->path_len || l->path[0] != '/' || !l->inode || l->inode == s->last_ino)
		return 0;
	base = base_name(l->path);
	if (is_musl(base))
		s->musl = true;
	/*
	 * libc is read only for an interpreter's thread data: note where it
	 * is, and open it after the scan if there is one. Opening it for
	 * every process sampled was a third of this function's time under
	 * process churn (two opens and fstats through /proc per process).
	 */
	if (!s->libc_mapped && is_libc(base)) {
		s->libc_mapped = true;
		s->libc_line = *l;
		snprintf(s->libc_path, sizeof(s->libc_path), "%.*s", (int)l->path_len, l->path);
		s->libc_line.path = s->libc_path;
		s->libc_line.path_len = strlen(s->libc_path);
	}
	want_libc = s->libc_pass && !s->libc && is_libc(base);
	if (l->inode == s->exe_ino && has_prefix(base, "python"))
		s->exe_python = true;
	/* the executable (a static interpreter) or a libpython */
	want_py = !s->python && (l->inode == s->exe_ino || has_prefix(base, "libpython"));
	if (!want_libc && !want_py)
		return 0;
	s->last_ino = l->inode;
	/*
	 * The executable, looked at already as another process's: its stat
	 * (the exe link's) finds it, with no open and fstat through
	 * map_files, for every process of a shell loop.
	 */
	f = want_py && !want_libc && s->have_exe_st && l->inode == s->exe_ino ?
		    file_find(s->py, &s->exe_st) : NULL;
	if (f) {
		/* known: nothing to open */
	} else if ((fd = open_mapped(s->py, s->pid, l, &st)) < 0) {
		return 0;
	} else if ((f = file_find(s->py, &st))) {
		close(fd);
	} else {
		f = file_slot(s->py, &st);
		if (bp_pyelf__open(fd, &e))
			return 0;
		if (want_libc)
			look_libc(f, e);
		else
			look_python(f, e, base, has_prefix(base, "python") ||
				    has_prefix(base, "libpython"));
		f->nr_loads = bp_pyelf__loads(e, f->load_off, f->load_vaddr, f->load_filesz,
					      MAX_LOADS);
		bp_pyelf__free(e);
	}
	if (want_py && f->kind == FILE_PYTHON) {
		size_t i;

		/* where this mapping puts the file: the same for all its mappings */
		/* a segment is mapped from its offset rounded down to a page */
		for (i = 0; i < f->nr_loads; i++)
			if (l->pgoff >= (f->load_off[i] & ~4095ULL) &&
			    l->pgoff < f->load_off[i] + (f->load_filesz[i] ? f->load_filesz[i] : 1))
				break;
		if (i == f->nr_loads)
			return 0;
		s->bias = l->start - (l->pgoff - f->load_off[i] + f->load_vaddr[i]);
	}
	if (want_libc && (f->kind == FILE_LIBC || f->kind == FILE_LIBC_UNKNOWN))
		s->libc = f;
	if (want_py && (f->kind == FILE_PYTHON || f->kind == FILE_UNSUPPORTED)) {
		s->python = f;
		snprintf(s->path, sizeof(s->path), "%.*s", (int)l->path_len, l->path);
	}
	return 0;
}

/* the second pass: the libc noted by the first, for an interpreter found there */
static void scan_libc(struct scan *s)
{
	if (!s->libc_mapped || s->musl)
		return;
	s->libc_pass = true;
	s->last_ino = 0;
	scan_map(&s->libc_line, s);
}

/* the GIL of 3.12+: the main interpreter's, made when the interpreter starts */
static int find_gil(struct py_proc *p, uint64_t runtime)
{
	uint64_t interp = 0, gil = 0;

	if (p->layout.rt_main_interp < 0)
		return 0;
	if (mem_read(p->pid, runtime + p->layout.rt_main_interp, &interp, 8) || !interp ||
	    mem_read(p->pid, interp + p->layout.interp_gil, &gil, 8) || !gil)
		return -EAGAIN;
	p->bpf.gil_lo = gil;
	p->bpf.gil_hi = gil + p->layout.gil_size;
	return 0;
}

static int publish(struct bp_python *py, struct py_proc *p)
{
	uint32_t key = p->pid;
	int err;

	/* no walker to tell: frames are walked from here (bp_python__walk()) */
	if (!py->l)
		return 0;
	err = bp_loader__open_interp(py->l, false);
	if (err)
		return err;
	if (bpf_map_update_elem(py->procs_fd, &key, &p->bpf, BPF_ANY)) {
		err = -errno;
		bp_dbg("pid %u: cannot hand the interpreter to the walker: %s", p->pid,
		       strerror(-err));
		return err;
	}
	bp_loader__interp_added(py->l);
	return 0;
}

/*
 * The dynamic loader is still mapping an interpreter's libraries: libc is
 * not there yet, and the executable is a python (its libpython comes
 * before libc: the loader maps needed libraries in the order they are
 * listed) or an interpreter we can walk, which needs libc's thread data.
 */
static bool loader_busy(const struct scan *s)
{
	if (s->musl || s->libc_mapped)
		return false;
	return s->python ? s->python->kind == FILE_PYTHON : s->exe_python;
}

/* true while the loader may still be at work: the process is looked at again */
static bool still_loading(struct bp_python *py, struct py_proc *p)
{
	switch (bp_loadwait__still(&p->lw, bp_now_ns())) {
	case BP_LOADWAIT_GAVE_UP:
		bp_dbg("pid %u: its interpreter or libc still not mapped after %llu s: "
		       "native frames only", p->pid, BP_LOADWAIT_NS / 1000000000ULL);
		py->st.loader_timeouts++;
		return false;
	case BP_LOADWAIT_NEW:
		py->st.loader_waits++;
		return true;
	default:
		return true;
	}
}

bool bp_python__waiting(const struct bp_python *py)
{
	uint32_t i;

	for (i = 0; py && i < py->nr_procs; i++)
		if (py->procs[i]->lw.waiting && !py->procs[i]->exited)
			return true;
	return false;
}

int bp_python__attach(struct bp_python *py, pid_t pid)
{
	struct scan s = { .py = py, .pid = pid };
	struct py_proc *p = proc_get(py, pid);
	char path[128];
	struct py_file *f;
	bool walkable;
	int err;

	if (!p)
		return -ENOMEM;
	if (p->state != PROC_NEW || p->exited || (py->l && !py->l->py_walk))
		return 0;
	snprintf(path, sizeof(path), "%s/%d/maps", py->proc_root, pid);
	/* one stat of its exe serves both walkers (procmaps.h) */
	if (!bp_procmaps__exe_stat(path, &s.exe_st)) {
		s.exe_ino = s.exe_st.st_ino;
		s.have_exe_st = true;
	}
	err = bp_procmaps__read(path, scan_map, &s, NULL);
	if (err) {
		/* gone already: nothing to walk */
		p->state = PROC_NONE;
		return 0;
	}
	f = s.python;
	/*
	 * Not (yet) an interpreter we can walk: a python executable's first
	 * sample can come while ld.so is still mapping its libraries, before
	 * its libpython, or before the libc whose thread data we read. Look
	 * again at every tick until they are there. Anything else is not
	 * looked at again until it execs.
	 */
	walkable = f && f->kind == FILE_PYTHON;
	if (walkable && !loader_busy(&s))
		scan_libc(&s);
	/*
	 * libc listed but not opened through its map_files entry: the line
	 * was the loader's first mapping of the whole file, which it replaces
	 * by the segments' own right after (the range named is gone). Still
	 * loading, not a python without glibc (seen in 1 run of ~10 of the
	 * views case: "no glibc mapped", native frames only for the run).
	 */
	if ((loader_busy(&s) || (walkable && s.libc_mapped && !s.musl && !s.libc)) &&
	    still_loading(py, p))
		return 0;
	bp_loadwait__done(&p->lw);
	if (!f) {
		p->state = PROC_NONE;
		return 0;
	}
	p->state = PROC_NONE;
	if (f->free_threaded) {
		memcpy(p->version, f->version, sizeof(p->version));
		p->free_threaded = true;
	}
	if (f->kind == FILE_UNSUPPORTED) {
		if (!f->warned) {
			bp_warn("pid %d (%s): %s: native frames only", pid, base_name(s.path), f->why);
			f->warned = true;
		}
		py->st.unsupported++;
		return 0;
	}
	if (s.musl || !s.libc || s.libc->kind != FILE_LIBC) {
		if (!f->warned) {
			bp_warn("pid %d (%s, Python %s): %s: native frames only", pid,
				base_name(s.path), f->version,
				s.musl ? "musl libc is not supported" :
				s.libc ? s.libc->why : "no glibc mapped");
			f->warned = true;
		}
		py->st.unsupported++;
		return 0;
	}
	p->minor = f->layout.minor;
	p->layout = f->layout;
	p->free_threaded = f->free_threaded;
	memcpy(p->version, f->version, sizeof(p->version));
	p->module = strdup(base_name(s.path));
	p->path = strdup(s.path);
	if (!p->module || !p->path)
		return -ENOMEM;
	p->bias = s.bias;
	p->code_type = s.bias + f->code_type;
	bp_py_layout_to_proc(&p->layout, &p->bpf);
	p->bpf.key_addr = s.bias + (p->minor == 6 ? f->key36 : f->runtime + p->layout.rt_key);
	p->bpf.none_addr = f->none ? s.bias + f->none : 0;
	p->bpf.tsd_off = s.libc->tsd_off;
	p->bpf.tsd_size = s.libc->tsd_size;
	if (f->gil_hi) {
		p->bpf.gil_lo = s.bias + f->gil_lo;
		p->bpf.gil_hi = s.bias + f->gil_hi;
	}
	p->state = find_gil(p, s.bias + f->runtime) == -EAGAIN ? PROC_PENDING : PROC_ATTACHED;
	err = publish(py, p);
	if (err) {
		p->state = PROC_NONE;
		return err;
	}
	py->st.attached++;
	bp_dbg("pid %d: Python %s in %s, walking its frames", pid, p->version, p->path);
	return 0;
}

void bp_python__tick(struct bp_python *py)
{
	uint32_t i;

	for (i = 0; i < py->nr_procs; i++) {
		struct py_proc *p = py->procs[i];
		uint64_t runtime;

		if (!p->pid || p->exited)
			continue;
		if (p->state == PROC_NEW && p->lw.waiting) {
			bp_python__attach(py, p->pid);
			continue;
		}
		if (p->state != PROC_PENDING)
			continue;
		/* runtime = the key's place minus its offset in _PyRuntime */
		runtime = p->bpf.key_addr - p->layout.rt_key;
		if (!find_gil(p, runtime)) {
			p->state = PROC_ATTACHED;
			publish(py, p);
		} else if (++p->retries > RETRIES_MAX) {
			p->state = PROC_ATTACHED;
		}
	}
}

void bp_python__exec(struct bp_python *py, pid_t pid)
{
	struct py_proc *p = proc_find(py, pid);

	/* the BPF side dropped its entry at the exec already */
	if (p)
		proc_reset(p);
}

bool bp_python__walks(struct bp_python *py, pid_t pid)
{
	struct py_proc *p = py ? proc_find(py, pid) : NULL;

	return p && (p->module || p->lw.waiting);
}

void bp_python__exited(struct bp_python *py, pid_t pid)
{
	struct py_proc *p = proc_find(py, pid);

	if (p)
		p->exited = true;
}

void bp_python__retire(struct bp_python *py)
{
	uint32_t i, n = 0;
	char path[64];

	for (i = 0; i < py->nr_procs; i++) {
		struct py_proc *p = py->procs[i];

		if (p->retiring) {
			proc_reset(p);
			free(p);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%u", py->proc_root, p->pid);
		if (p->exited || (access(path, F_OK) && errno == ENOENT))
			p->retiring = p->exited = true;
		py->procs[n++] = p;
	}
	if (n == py->nr_procs)
		return;
	py->nr_procs = n;
	bp_htab_clear(&py->proc_h);
	for (i = 0; i < n; i++)
		bp_htab_insert(&py->proc_h, bp_hash_u64(py->procs[i]->pid), i);
}

const char *bp_python__version(struct bp_python *py, pid_t pid, bool *free_threaded)
{
	struct py_proc *p = proc_find(py, pid);

	/* a free-threaded interpreter is named even though its frames are not walked */
	if (!p || (p->state != PROC_ATTACHED && p->state != PROC_PENDING && !p->free_threaded))
		return NULL;
	if (free_threaded)
		*free_threaded = p->free_threaded;
	return p->version;
}

/* --- code objects ----------------------------------------------------------- */

static bool code_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct py_proc *)ctx)->codes[idx]->addr == *(const uint64_t *)key;
}

static struct py_code *code_find(struct py_proc *p, uint64_t addr)
{
	uint32_t idx;

	if (bp_htab_find(&p->code_h, bp_hash_u64(addr), code_eq, p, &addr, &idx))
		return NULL;
	return p->codes[idx];
}

static void code_set_table(struct py_proc *p, struct py_code *c, uint8_t *table, uint32_t len)
{
	p->code_bytes -= c->table_len;
	free(c->table);
	c->table = table;
	c->table_len = len;
	p->code_bytes += len;
}

static void on_code(struct bp_python *py, const struct bp_py_code_ev *ev, size_t len)
{
	char name[BP_PY_NAME_MAX * 4 + 1], file[BP_PY_FILE_MAX * 4 + 1];
	struct py_proc *p = proc_find(py, ev->tgid);
	struct py_code *c;
	uint8_t *table = NULL;
	size_t nl, fl;
	uint32_t idx;

	if (len < BP_PY_EV_FIXED || ev->table_len > BP_PY_TABLE_MAX ||
	    len < BP_PY_EV_FIXED + ev->table_len || !ev->code || (ev->code & 7)) {
		py->st.code_events_bad++;
		return;
	}
	py->st.code_events++;
	if (!p || (p->state != PROC_ATTACHED && p->state != PROC_PENDING))
		return;
	if (bp_py_text(&ev->name, ev->name_text, sizeof(ev->name_text), name, sizeof(name)) ==
	    -EINVAL)
		snprintf(name, sizeof(name), "[python]");
	if (bp_py_text(&ev->file, ev->file_text, sizeof(ev->file_text), file, sizeof(file)) ==
	    -EINVAL)
		file[0] = '\0';
	c = code_find(p, ev->code);
	if (!c) {
		if (p->nr_codes >= CODES_MAX || p->code_bytes + ev->table_len > CODE_BYTES_MAX) {
			py->st.code_dropped++;
			return;
		}
		if (p->nr_codes == p->cap_codes) {
			uint32_t ncap = p->cap_codes ? p->cap_codes * 2 : 256;
			struct py_code **n = realloc(p->codes, ncap * sizeof(*n));

			if (!n)
				return;
			p->codes = n;
			p->cap_codes = ncap;
		}
	} else {
		/* another code object at the address of one that was freed */
		for (idx = 0; idx < p->nr_codes && p->codes[idx] != c; idx++)
			;
		bp_htab_remove(&p->code_h, bp_hash_u64(c->addr), idx);
		p->code_bytes -= c->table_len;
		free(c->table);
		p->codes[idx] = p->codes[--p->nr_codes];
		free(c);
		bp_htab_clear(&p->code_h);
		for (idx = 0; idx < p->nr_codes; idx++)
			bp_htab_insert(&p->code_h, bp_hash_u64(p->codes[idx]->addr), idx);
		/* frames made from the old one are no longer its */
		bp_python__drain_done(py);
	}
	nl = strlen(name) + 1;
	fl = strlen(file) + 1;
	c = calloc(1, sizeof(*c) + nl + fl);
	if (ev->table_len) {
		table = malloc(ev->table_len);
		if (table)
			memcpy(table, ev->table, ev->table_len);
	}
	if (!c || (ev->table_len && !table) ||
	    bp_htab_insert(&p->code_h, bp_hash_u64(ev->code), p->nr_codes)) {
		free(c);
		free(table);
		return;
	}
	c->addr = ev->code;
	c->firstlineno = ev->firstlineno;
	c->name = (char *)(c + 1);
	c->file = c->name + nl;
	memcpy(c->name, name, nl);
	memcpy(c->file, file, fl);
	c->table_addr = ev->table_addr;
	c->table_size = (ev->flags & BP_PY_CODE_TABLE_ERR) ? 0 : ev->table_size;
	c->table = table;
	c->table_len = ev->table_len;
	p->code_bytes += ev->table_len;
	p->codes[p->nr_codes++] = c;
}

void bp_python__on_event(void *ctx, const void *rec, size_t len)
{
	struct bp_python *py = ctx;
	uint32_t kind;

	if (len < sizeof(kind))
		return;
	memcpy(&kind, rec, sizeof(kind));
	if (kind == BP_PY_EV_CODE)
		on_code(py, rec, len);
	else
		py->st.code_events_bad++;
}

/* the rest of a line table the BPF side cut, from the living process */
static void refetch_table(struct bp_python *py, struct py_proc *p, struct py_code *c)
{
	uint64_t n = c->table_size;
	uint8_t *t;

	c->refetched = true;
	if (p->exited || n <= c->table_len || !c->table_addr)
		return;
	if (n > TABLE_REFETCH_MAX)
		n = TABLE_REFETCH_MAX;
	if (p->code_bytes + n > CODE_BYTES_MAX)
		return;
	t = malloc(n);
	if (!t)
		return;
	if (mem_read(p->pid, c->table_addr + 32, t, n)) {
		free(t);
		return;
	}
	code_set_table(p, c, t, (uint32_t)n);
	py->st.code_refetched++;
}

/* --- frames ---------------------------------------------------------------- */

struct fc_key {
	uint64_t word;
	uint32_t pid;
};

static bool fc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct frame_cache *fc = ctx;
	const struct fc_key *k = key;

	return fc->words[idx] == k->word && fc->pids[idx] == k->pid;
}

static uint64_t fc_hash(uint32_t pid, uint64_t word)
{
	return bp_hash_u64(word ^ ((uint64_t)pid << 47));
}

static int fc_put(struct frame_cache *fc, uint32_t pid, uint64_t word, uint32_t id)
{
	if (fc->len == fc->cap) {
		uint32_t ncap = fc->cap ? fc->cap * 2 : 1024;
		uint64_t *w = realloc(fc->words, ncap * sizeof(*w));
		uint32_t *pp, *ii;

		if (!w)
			return -ENOMEM;
		fc->words = w;
		pp = realloc(fc->pids, ncap * sizeof(*pp));
		if (!pp)
			return -ENOMEM;
		fc->pids = pp;
		ii = realloc(fc->ids, ncap * sizeof(*ii));
		if (!ii)
			return -ENOMEM;
		fc->ids = ii;
		fc->cap = ncap;
	}
	if (bp_htab_insert(&fc->h, fc_hash(pid, word), fc->len))
		return -ENOMEM;
	fc->words[fc->len] = word;
	fc->pids[fc->len] = pid;
	fc->ids[fc->len] = id;
	fc->len++;
	return 0;
}

static int64_t python_frame(struct bp_python *py, struct py_proc *p, uint64_t word)
{
	struct fc_key k = { word & ~BP_PY_RUN_END, p->pid };
	struct bp_frame f = { .python = true };
	struct py_code *c;
	uint32_t idx;
	int64_t id;
	bool cut = false;

	if (!bp_htab_find(&py->fc.h, fc_hash(k.pid, k.word), fc_eq, &py->fc, &k, &idx))
		return py->fc.ids[idx];
	c = code_find(p, bp_py_word_code(word));
	f.module = p->module;
	f.path = p->path;
	if (c) {
		f.name = c->name;
		f.file = c->file[0] ? c->file : NULL;
		f.line = bp_py_line(p->minor, c->table, c->table_len, c->firstlineno,
				    bp_py_word_idx(word), &cut);
		if (cut && !c->refetched) {
			refetch_table(py, p, c);
			f.line = bp_py_line(p->minor, c->table, c->table_len, c->firstlineno,
					    bp_py_word_idx(word), &cut);
		}
	} else {
		/* never copied (the ring was full, or the process gone before a retry) */
		f.name = "[python]";
		py->st.frames_unread++;
	}
	id = bp_profile__frame(py->prof, &f);
	if (id < 0)
		return id;
	if (fc_put(&py->fc, k.pid, k.word, (uint32_t)id))
		return -ENOMEM;
	return id;
}

int bp_python__merge(struct bp_python *py, uint32_t pid, const struct bp_stack *ps,
		     const uint32_t *nat, uint32_t nn, uint32_t *out, uint32_t max)
{
	struct py_proc *p = proc_find(py, pid);
	uint32_t ids[BP_MAX_STACK_DEPTH], nr, i;
	bool ends[BP_MAX_STACK_DEPTH];
	int64_t id;

	nr = ps->nr < BP_MAX_STACK_DEPTH ? ps->nr : BP_MAX_STACK_DEPTH;
	if (!p || !p->module)
		nr = 0;
	for (i = 0; i < nr; i++) {
		id = python_frame(py, p, ps->ips[i]);
		if (id < 0)
			return (int)id;
		ids[i] = (uint32_t)id;
		ends[i] = ps->ips[i] & BP_PY_RUN_END;
	}
	return (int)bp_py_merge(py->prof, p ? p->module : NULL, nat, nn, ids, ends, nr, out, max);
}

/* --- life cycle ------------------------------------------------------------- */

void bp_python__set_profile(struct bp_python *py, struct bp_profile *prof)
{
	py->prof = prof;
	bp_python__drain_done(py);
}

void bp_python__drain_done(struct bp_python *py)
{
	bp_htab_clear(&py->fc.h);
	py->fc.len = 0;
}

struct bp_python *bp_python__new(struct bp_loader *l, const char *proc_root)
{
	struct bp_python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->l = l;
	py->procs_fd = l ? bp_loader__py_procs_fd(l) : -1;
	py->proc_root = strdup(proc_root ? proc_root : "/proc");
	if (!py->proc_root) {
		free(py);
		return NULL;
	}
	return py;
}

void bp_python__free(struct bp_python *py)
{
	uint32_t i;

	if (!py)
		return;
	for (i = 0; i < py->nr_procs; i++) {
		proc_reset(py->procs[i]);
		free(py->procs[i]);
	}
	free(py->procs);
	bp_htab_free(&py->proc_h);
	bp_htab_free(&py->fc.h);
	free(py->fc.words);
	free(py->fc.pids);
	free(py->fc.ids);
	free(py->proc_root);
	free(py);
}

/* --- walking from userspace (boundprof dump) ------------------------------ */

/* a string of the process as the BPF side's py_copy_str() copies it */
static void user_str(pid_t pid, const struct bp_py_proc *b, uint64_t addr, struct bp_py_str *s,
		     uint8_t *text, uint32_t slot)
{
	uint8_t hdr[40];
	uint64_t len, n;
	uint32_t state, kind;

	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->flags = BP_PY_STR_ERR;
	if (!addr || mem_read(pid, addr, hdr, sizeof(hdr)))
		return;
	memcpy(&len, hdr + BP_PY_STR_LEN, 8);
	memcpy(&state, hdr + BP_PY_STR_STATE, 4);
	kind = (state >> BP_PY_STATE_KIND_SHIFT) & BP_PY_STATE_KIND_MASK;
	if (!(state & BP_PY_STATE_COMPACT) || (kind != 1 && kind != 2 && kind != 4))
		return;
	s->flags = (state & BP_PY_STATE_ASCII) ? BP_PY_STR_ASCII : 0;
	s->len = len;
	s->kind = kind;
	n = len * kind < slot ? len * kind : slot;
	if (n && mem_read(pid, addr + ((state & BP_PY_STATE_ASCII) ? b->str_ascii : b->str_compact),
			  text, n)) {
		s->flags |= BP_PY_STR_ERR;
		return;
	}
	s->copied = n;
}

/* a code object read from the process, kept as if the BPF side had sent it */
static void user_code(struct bp_python *py, struct py_proc *p, uint64_t code)
{
	const struct bp_py_proc *b = &p->bpf;
	struct bp_py_code_ev *ev;
	uint64_t ptr[3] = { 0 }, size = 0;
	uint32_t n = 0;

	if (code_find(p, code))
		return;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return;
	ev->kind = BP_PY_EV_CODE;
	ev->tgid = p->pid;
	ev->code = code;
	ev->version = p->bpf.version;
	mem_read(p->pid, code + b->co_firstlineno, &ev->firstlineno, 4);
	mem_read(p->pid, code + b->co_name, &ptr[0], 8);
	mem_read(p->pid, code + b->co_filename, &ptr[1], 8);
	mem_read(p->pid, code + b->co_linetable, &ptr[2], 8);
	user_str(p->pid, b, ptr[0], &ev->name, ev->name_text, BP_PY_NAME_MAX);
	user_str(p->pid, b, ptr[1], &ev->file, ev->file_text, BP_PY_FILE_MAX);
	ev->table_addr = ptr[2];
	/* a bytes object: ob_size at 16, the bytes at 32, in every version */
	if (!ptr[2] || mem_read(p->pid, ptr[2] + 16, &size, 8)) {
		ev->flags |= BP_PY_CODE_TABLE_ERR;
	} else {
		ev->table_size = size;
		n = size > BP_PY_TABLE_MAX ? BP_PY_TABLE_MAX : (uint32_t)size;
		if (n && mem_read(p->pid, ptr[2] + 32, ev->table, n)) {
			ev->flags |= BP_PY_CODE_TABLE_ERR;
			n = 0;
		}
	}
	ev->table_len = n;
	on_code(py, ev, BP_PY_EV_FIXED + n);
	free(ev);
}

static uint64_t rd64(const uint8_t *buf, uint32_t off, uint32_t cap)
{
	uint64_t v = 0;

	if (off + 8 <= cap)
		memcpy(&v, buf + off, 8);
	return v;
}

int bp_python__walk(struct bp_python *py, pid_t pid, pid_t tid, uint64_t fsbase,
		    struct bp_stack *ps)
{
	struct py_proc *p = proc_find(py, pid);
	const struct bp_py_proc *b;
	uint8_t ts[BP_PY_TS_READ_MAX], fr[BP_PY_FRAME_READ_MAX];
	uint64_t tstate = 0, frame, code, ip, pos, want;
	int32_t tss[2] = { 0, -1 }, key = -1, lasti;
	uint32_t n = 0, fread_len, guard;
	bool end;

	ps->nr = 0;
	ps->flags = 0;
	if (!p || (p->state != PROC_ATTACHED && p->state != PROC_PENDING) || !fsbase)
		return 0;
	b = &p->bpf;
	if (b->key_tss) {
		if (mem_read(pid, b->key_addr, tss, sizeof(tss)) || tss[0] != 1)
			return 0;
		key = tss[1];
	} else if (mem_read(pid, b->key_addr, &key, sizeof(key))) {
		return 0;
	}
	/* glibc's first block of thread-specific data: keys 0..31, as in BPF */
	if (key < 0 || key >= 32 ||
	    mem_read(pid, fsbase + b->tsd_off + (uint64_t)key * b->tsd_size, &tstate, 8) ||
	    !tstate)
		return 0;
	if (b->ts_read > sizeof(ts) || mem_read(pid, tstate, ts, b->ts_read))
		return -EFAULT;
	want = b->tid_kind == BP_PY_TID_NATIVE ? (uint64_t)tid : fsbase;
	if (rd64(ts, b->ts_tid, b->ts_read) != want)
		return -ESRCH;
	frame = rd64(ts, b->ts_frame, b->ts_read);
	if (frame && b->cf_frame != BP_PY_NONE && mem_read(pid, frame + b->cf_frame, &frame, 8))
		return -EFAULT;
	fread_len = b->f_read > sizeof(fr) ? sizeof(fr) : b->f_read;
	for (guard = 0; frame && guard < 4 * BP_MAX_STACK_DEPTH; guard++) {
		if (mem_read(pid, frame, fr, fread_len)) {
			ps->flags |= BP_STACK_CUT;
			break;
		}
		code = rd64(fr, b->f_code, fread_len);
		frame = rd64(fr, b->f_back, fread_len);
		if (b->entry_kind == BP_PY_ENTRY_SHIM &&
		    ((b->f_entry < fread_len && fr[b->f_entry] == 3) || code == b->none_addr)) {
			if (n)
				ps->ips[n - 1] |= BP_PY_RUN_END;
			continue;
		}
		if (!code || (code & 7)) {
			ps->flags |= BP_STACK_CUT;
			break;
		}
		if (n >= BP_MAX_STACK_DEPTH) {
			ps->flags |= BP_STACK_CUT;
			break;
		}
		pos = 0;
		if (b->lasti_kind == BP_PY_LASTI_PTR) {
			ip = rd64(fr, b->f_lasti, fread_len);
			if (ip >= code + b->co_code)
				pos = (ip - code - b->co_code) / 2;
		} else if ((uint32_t)b->f_lasti + 4 <= fread_len) {
			memcpy(&lasti, fr + b->f_lasti, 4);
			if (lasti > 0)
				pos = b->lasti_kind == BP_PY_LASTI_BYTES ? lasti / 2 : lasti;
		}
		end = b->entry_kind == BP_PY_ENTRY_EACH ||
		      (b->entry_kind == BP_PY_ENTRY_FLAG && b->f_entry < fread_len && fr[b->f_entry]);
		ps->ips[n++] = bp_py_word(code, pos, end);
		user_code(py, p, code);
	}
	if (n)
		ps->ips[n - 1] |= BP_PY_RUN_END;
	ps->nr = n;
	return 0;
}

void bp_python__gil(const struct bp_python *py, pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct py_proc *p = proc_find((struct bp_python *)py, pid);

	*lo = p ? p->bpf.gil_lo : 0;
	*hi = p ? p->bpf.gil_hi : 0;
}

const struct bp_python_stats *bp_python__stats(const struct bp_python *py)
{
	return &py->st;
}
