// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's daemon: slices into windows, windows into files and HTTP
 * answers. See daemon.h and docs/agent.md.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/python.h"
#include "analyze/verdict.h"
#include "collect/collect.h"
#include "collect/dump.h"
#include "collect/loader.h"
#include "collect/session.h"
#include "collect/unwind.h"
#include "export/dump_out.h"
#include "export/flame.h"
#include "export/folded.h"
#include "export/pprof.h"
#include "export/report_json.h"
#include "model/funcview.h"
#include "model/merge.h"
#include "model/profile.h"
#include "proc/procinfo.h"
#include "serve/daemon.h"
#include "serve/httpd.h"
#include "serve/local.h"
#include "serve/metrics.h"
#include "serve/prom.h"
#include "serve/token.h"
#include "symbolize/symbols.h"
#include "util/atomicfile.h"
#include "util/buf.h"
#include "util/log.h"

#define SLICE_NS	1000000000ULL
/* hotspots per process in a window's summary, as `boundprof report` has */
#define SUMMARY_HOT	20

struct capture {
	uint64_t id;		/* the held HTTP request */
	uint32_t slices_left;
	struct bp_profile *p;
};

struct bp_daemon {
	struct bp_daemon_opts o;
	struct bp_session *s;
	struct bp_httpd *http;
	struct bp_local *local;		/* the users' socket; NULL: none */
	int ep;
	struct bp_profile *window;	/* being filled from slices */
	uint64_t window_end;
	struct bp_profile *last;	/* the last closed window ... */
	struct bp_profile *last_view;	/* ... in the Python view (last itself without Python) */
	struct bp_summary last_sum;	/* ... and its summary (of the view) */
	bool have_last;
	struct capture caps[BP_DAEMON_MAX_CAPTURES];
	uint32_t nr_caps;
	struct bp_dev_totals *devs;
	uint32_t nr_devs;
	struct bp_agent_self self;
	uint64_t seq;
	char run[BP_DAEMON_RUN_LEN + 1];	/* this run's id, in every window's name */
	int dirfd;			/* the window directory, -1 without one */
	char *token;			/* the bearer token, NULL: none asked for */
	uint64_t unauthorized;		/* requests answered 401 */
	uint64_t forbidden;		/* answered 403: no token, not root */
	char last_name[96];		/* stem of the last window written */
	double peak_fill[4];
	volatile sig_atomic_t stop;	/* the signal that asked, or -1 */
	volatile sig_atomic_t reopen;
};

/* cheap to answer, and what monitoring needs most: they keep reserved HTTP slots */
static const char *const priority_paths[] = { "/metrics", "/healthz", NULL };

void bp_daemon_opts_default(struct bp_daemon_opts *o)
{
	*o = (struct bp_daemon_opts){
		.interval_s = 10,
		.dir = "/var/lib/boundprof",
		.keep = 60,
		.top = 20,
		.bpf_stats = true,
		.listen = "127.0.0.1:9741",
		.capture_margin_ms = BP_DAEMON_CAPTURE_MARGIN_MS,
		.session = {
			.hz = 99,
			.offcpu = true,
			.offcpu_ustacks = 2,
			.no_preempt_stacks = true,
			/* its own cost is in its metrics, not in its profile */
			.skip_self = true,
			/*
			 * An idle CPU's sample only counted it idle (2.7 us of
			 * BPF each, 190 a second on an idle 2-CPU machine); the
			 * windows' busy share comes from /proc/stat.
			 */
			.no_idle_samples = true,
			/* short-lived processes (a curl scraping it): frame pointers */
			.unwind_min_age_ns = BP_DAEMON_UNWIND_MIN_AGE_NS,
			.drain_interval_s = 1.0,
			.membw = true,
			/* always on: the lines of the few files that fit, not of every debug file */
			.dwarf_budget = BP_DAEMON_DWARF_BUDGET,
			/* most files its processes map are never hit: symbols.h */
			.lazy_symbols = true,
			/* its lines are for the user's code: libc6-dbg's DWARF is 5.7 MiB */
			.dwarf_not_from_root = true,
			/*
			 * It starts once and runs for months: verifying on two
			 * CPUs would save 0.1 s once and hold about 12 MiB more
			 * at its peak, which is what counts here.
			 */
			.serial_load = true,
		},
	};
	bp_local_opts_default(&o->local);
	/* the library serves no socket unless asked: the program picks the path */
	o->local.path = NULL;
}

void bp_daemon__request_stop(struct bp_daemon *d, int sig)
{
	d->stop = sig > 0 ? sig : -1;
}

void bp_daemon__request_reopen(struct bp_daemon *d)
{
	d->reopen = 1;
}

uint32_t bp_daemon__captures(const struct bp_daemon *d)
{
	return d->nr_caps;
}

uint64_t bp_daemon__windows(const struct bp_daemon *d)
{
	return d->self.windows;
}

const char *bp_daemon__last_stem(const struct bp_daemon *d)
{
	return d->last_name;
}

const char *bp_daemon__run_id(const struct bp_daemon *d)
{
	return d->run;
}

/*
 * The directory, with its parents (as mkdir -p makes them); the directory
 * itself 0700 whatever the umask: the windows name every process and its
 * command line. 0 or -errno.
 */
static int mkdirs(const char *dir)
{
	char path[4096], *p;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (!mkdir(path, 0700)) {
		/* ours, just made: only the umask could have taken bits away */
		if (chmod(path, 0700))
			return -errno;
	} else if (errno != EEXIST) {
		return -errno;
	}
	return 0;
}

/* where a missing directory would be created: its nearest existing ancestor must allow it */
static int check_creatable(const char *dir)
{
	char path[4096], *slash;
	struct stat st;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (;;) {
		slash = strrchr(path, '/');
		if (!slash)
			snprintf(path, sizeof(path), ".");
		else if (slash == path)
			path[1] = '\0';
		else
			*slash = '\0';
		if (!stat(path, &st))
			break;
		if (errno != ENOENT || !strcmp(path, ".") || !strcmp(path, "/"))
			return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(path, W_OK | X_OK) ? -errno : 0;
}

int bp_daemon_check(const struct bp_daemon_opts *o)
{
	const char *why;
	struct stat st;
	char *token;
	int err = 0;

	if (o->dir) {
		if (!o->dir[0])
			err = -ENOENT;
		else if (!stat(o->dir, &st))
			err = !S_ISDIR(st.st_mode) ? -ENOTDIR :
			      access(o->dir, W_OK | X_OK) ? -errno : 0;
		else
			err = errno == ENOENT ? check_creatable(o->dir) : -errno;
		if (err) {
			bp_err("cannot use --dir %s: %s", o->dir, strerror(-err));
			return err;
		}
	}
	if (o->token_file) {
		err = bp_token_load(o->token_file, &token, &why);
		if (err) {
			bp_err("cannot use --token-file %s: %s", o->token_file, why);
			return err;
		}
		free(token);
	}
	return 0;
}

/*
 * (Re)open the window directory, creating it if it is missing. A directory
 * others can read or write is used, with a warning: the windows themselves
 * are 0600, but their names and count show, and whoever may write it may
 * remove them. 0 or -errno (logged).
 */
static int open_dir(struct bp_daemon *d)
{
	struct stat st;
	int err, fd;

	err = mkdirs(d->o.dir);
	fd = err ? -1 : open(d->o.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && fd < 0)
		err = -errno;
	if (!err && fstat(fd, &st))
		err = -errno;
	if (!err && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS))
		err = -errno;
	if (err) {
		if (fd >= 0)
			close(fd);
		bp_err("cannot write to --dir %s: %s", d->o.dir, strerror(-err));
		return err;
	}
	if (st.st_mode & 077)
		bp_warn("--dir %s is open to others (mode %04o): chmod 700 it", d->o.dir,
			st.st_mode & 07777);
	if (st.st_uid != geteuid())
		bp_warn("--dir %s belongs to uid %u, who may remove or replace the windows",
			d->o.dir, st.st_uid);
	if (d->dirfd >= 0)
		close(d->dirfd);
	d->dirfd = fd;
	return 0;
}

/* ---------------------------------------------------------------- files */

int bp_window_stem(char *out, size_t size, int64_t end_unix_s, const char *run, uint64_t seq)
{
	time_t t = end_unix_s;
	char when[32];
	struct tm tm;
	size_t i;

	for (i = 0; i < BP_DAEMON_RUN_LEN; i++) {
		if (!isxdigit((unsigned char)run[i]) || isupper((unsigned char)run[i]))
			return -EINVAL;
	}
	if (run[i])
		return -EINVAL;
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm) ||
	    strlen(when) != 16)
		return -EINVAL;
	if (snprintf(out, size, BP_DAEMON_FILE_PREFIX "%s-%s-%08" PRIu64, when, run, seq) >=
	    (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static bool all_of(const char *s, size_t n, int (*is)(int))
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!is((unsigned char)s[i]))
			return false;
	}
	return true;
}

static int is_lower_hex(int c)
{
	return isdigit(c) || (c >= 'a' && c <= 'f');
}

int bp_window_name_parse(const char *name, struct bp_window_name *w)
{
	size_t plen = strlen(BP_DAEMON_FILE_PREFIX), n;
	const char *p = name, *seq, *ext;
	char *end;

	/* boundprof-YYYYmmddTHHMMSSZ-RRRRRRRR-SSSSSSSS.pb.gz */
	if (strncmp(p, BP_DAEMON_FILE_PREFIX, plen))
		return -EINVAL;
	p += plen;
	if (!all_of(p, 8, isdigit) || p[8] != 'T' || !all_of(p + 9, 6, isdigit) || p[15] != 'Z' ||
	    p[16] != '-')
		return -EINVAL;
	memcpy(w->when, p, 16);
	w->when[16] = '\0';
	p += 17;
	if (!all_of(p, BP_DAEMON_RUN_LEN, is_lower_hex) || p[BP_DAEMON_RUN_LEN] != '-')
		return -EINVAL;
	memcpy(w->run, p, BP_DAEMON_RUN_LEN);
	w->run[BP_DAEMON_RUN_LEN] = '\0';
	seq = p + BP_DAEMON_RUN_LEN + 1;
	for (n = 0; isdigit((unsigned char)seq[n]); n++)
		;
	if (n < 8 || n > 19)
		return -EINVAL;
	errno = 0;
	w->seq = strtoull(seq, &end, 10);
	if (errno)
		return -EINVAL;
	ext = seq + n;
	if (!strcmp(ext, ".pb.gz"))
		w->json = false;
	else if (!strcmp(ext, ".json"))
		w->json = true;
	else
		return -EINVAL;
	w->stem_len = ext - name;
	return 0;
}

/* a file this agent could have written: regular, ours, the only link to it */
static bool ours_at(int dirfd, const char *name, struct stat *st)
{
	return !fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st->st_mode) &&
	       st->st_uid == geteuid() && st->st_nlink == 1;
}

/*
 * A window being written lives under ".NAME.XXXXXX" until it is renamed;
 * an agent killed with SIGKILL (or a machine losing power) leaves it behind,
 * and retention, which counts finished windows only, would never see it.
 * Run at start-up, before this agent writes anything.
 */
static void sweep_temps(struct bp_daemon *d)
{
	struct bp_window_name w;
	struct dirent *de;
	struct stat st;
	char name[256];
	int fd = dup(d->dirfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	size_t n;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* a dup shares the offset: start from the top whatever read it last */
	rewinddir(dir);
	while ((de = readdir(dir))) {
		n = strlen(de->d_name);
		/* "." + a window's exact name + "." + six characters */
		if (de->d_name[0] != '.' || n < 9 || n - 8 >= sizeof(name) || de->d_name[n - 7] != '.')
			continue;
		memcpy(name, de->d_name + 1, n - 8);
		name[n - 8] = '\0';
		if (bp_window_name_parse(name, &w) || !ours_at(d->dirfd, de->d_name, &st))
			continue;
		if (unlinkat(d->dirfd, de->d_name, 0) && errno != ENOENT)
			bp_warn("cannot remove %s/%s: %s", d->o.dir, de->d_name, strerror(errno));
		else
			bp_info("removed %s/%s, left by an agent that was killed mid-write", d->o.dir,
				de->d_name);
	}
	closedir(dir);
}

struct win_file {
	char *name;
	struct bp_window_name w;
	bool this_run;
	uint64_t size;
};

/* oldest first: earlier runs by time and sequence, then this run by sequence */
static int cmp_files(const void *a, const void *b)
{
	const struct win_file *x = a, *y = b;
	int c;

	if (x->this_run != y->this_run)
		return x->this_run ? 1 : -1;
	if (!x->this_run && (c = strcmp(x->w.when, y->w.when)))
		return c;
	if (!x->this_run && (c = strcmp(x->w.run, y->w.run)))
		return c;
	if (x->w.seq != y->w.seq)
		return x->w.seq < y->w.seq ? -1 : 1;
	return x->w.json - y->w.json;
}

static bool same_window(const struct win_file *a, const struct win_file *b)
{
	return a->this_run == b->this_run && a->w.seq == b->w.seq &&
	       !strcmp(a->w.run, b->w.run) && !strcmp(a->w.when, b->w.when);
}

int bp_retain(int dirfd, const char *run, uint32_t keep, uint64_t keep_bytes)
{
	struct win_file *files = NULL, *nf;
	size_t nr = 0, cap = 0, i, j, first;
	uint64_t bytes = 0, windows = 0;
	struct bp_window_name w;
	struct dirent *de;
	struct stat st;
	int removed = 0, fd = dup(dirfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir) {
		i = errno;
		if (fd >= 0)
			close(fd);
		return -(int)i;
	}
	rewinddir(dir);
	while ((de = readdir(dir))) {
		if (bp_window_name_parse(de->d_name, &w) || !ours_at(dirfd, de->d_name, &st))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 64;
			nf = realloc(files, cap * sizeof(*files));
			if (!nf)
				break;
			files = nf;
		}
		files[nr] = (struct win_file){ .name = strdup(de->d_name), .w = w,
					       .this_run = !strcmp(w.run, run),
					       .size = st.st_size };
		if (files[nr].name)
			nr++;
	}
	closedir(dir);
	if (nr)
		qsort(files, nr, sizeof(*files), cmp_files);
	/* newest last: walk back by window */
	for (i = nr; i > 0; i = first) {
		uint64_t size = 0;
		bool kept;

		first = i - 1;
		while (first > 0 && same_window(&files[first - 1], &files[i - 1]))
			first--;
		for (j = first; j < i; j++)
			size += files[j].size;
		windows++;
		bytes += size;
		/* the newest window is kept whatever its size: never an empty directory */
		kept = windows == 1 || (windows <= keep && (!keep_bytes || bytes <= keep_bytes));
		for (j = first; !kept && j < i; j++) {
			/* looked at again right before: what is removed is still what was counted */
			if (!ours_at(dirfd, files[j].name, &st))
				continue;
			if (unlinkat(dirfd, files[j].name, 0) && errno != ENOENT)
				bp_warn("cannot remove %s: %s", files[j].name, strerror(errno));
		}
		removed += !kept;
	}
	for (i = 0; i < nr; i++)
		free(files[i].name);
	free(files);
	return removed;
}

static int write_file(struct bp_daemon *d, const char *name, const struct bp_buf *b)
{
	struct bp_afile f = BP_AFILE_INIT;
	int err;

	/* 0600 whatever the umask: a window names every process and its command line */
	err = bp_afile_open(&f, d->dirfd, name, 0600);
	if (!err)
		err = bp_afile_commit(&f, b->data, b->len);
	if (err)
		bp_warn("cannot write %s/%s: %s", d->o.dir, name, strerror(-err));
	return err;
}

static int afile_sink(void *ctx, const char *data, size_t len)
{
	return bp_afile_write(ctx, data, len);
}

/*
 * The JSON report goes to its file as it is written: under churn it is
 * 1.2-1.3 MB a window, which built whole in memory raised the agent's peak
 * resident set at every window's end.
 */
#define JSON_SINK_AT	(64 * 1024)

static int write_json(struct bp_daemon *d, const char *name)
{
	struct bp_afile f = BP_AFILE_INIT;
	struct bp_buf b = BP_BUF_INIT;
	int err;

	err = bp_afile_open(&f, d->dirfd, name, 0600);
	if (!err) {
		bp_buf_sink(&b, afile_sink, &f, JSON_SINK_AT);
		err = bp_export_json(d->last_view, &d->last_sum, true, &b);
		if (!err)
			err = bp_buf_flush(&b);
		if (!err)
			err = bp_afile_commit(&f, NULL, 0);
		else
			bp_afile_abort(&f);
	}
	bp_buf_free(&b);
	if (err && err != -ENOMEM)
		bp_warn("cannot write %s/%s: %s", d->o.dir, name, strerror(-err));
	return err;
}

/* the window's files: .pb.gz to re-render anything, .json to read at once */
static void write_window(struct bp_daemon *d)
{
	int err;
	struct bp_buf b = BP_BUF_INIT;
	char stem[96], name[128];
	int64_t end = (d->last->start_unix_ns + (int64_t)(d->last->end_ns - d->last->start_ns)) /
		      1000000000LL;

	if (d->dirfd < 0)
		return;
	bp_window_stem(stem, sizeof(stem), end, d->run, d->seq);
	/* write_file() says why it failed; encoding can only run out of memory */
	snprintf(name, sizeof(name), "%s.pb.gz", stem);
	err = bp_pprof_write(d->last, &b);
	if (!err)
		err = write_file(d, name, &b) ?: 1;
	bp_buf_reset(&b);
	if (err == 1) {
		snprintf(name, sizeof(name), "%s.json", stem);
		err = write_json(d, name) ?: 1;
	}
	bp_buf_free(&b);
	if (err == 1) {
		snprintf(d->last_name, sizeof(d->last_name), "%s", stem);
	} else {
		/* the agent goes on: the window is still served over HTTP */
		d->self.write_errors++;
		if (err == -ENOMEM)
			bp_warn("cannot encode %s: out of memory", name);
	}
	bp_retain(d->dirfd, d->run, d->o.keep, d->o.keep_bytes);
}

/* ------------------------------------------------------------- windows */

static uint64_t rss_bytes(void)
{
	unsigned long size, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (uint64_t)rss * sysconf(_SC_PAGESIZE);
}

/*
 * What a burst of processes left behind goes back to the system, when it
 * is worth it: malloc_trim() hands every free page in the heap back, and
 * the next window faults most of them in again (a trim at every window
 * close was 4% of the agent's CPU under the bench's mixed load, with
 * under a MiB to return). As much as the heap keeps anyway (cli/agent.c:
 * a window's arrays, reused by the next one).
 */
#define TRIM_FREE_MIN	(8u << 20)

static void trim_heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	if (mi.fordblks >= TRIM_FREE_MIN)
		malloc_trim(0);
}

static void update_self(struct bp_daemon *d)
{
	struct bp_syms_stats ss;
	struct rusage ru;
	int64_t run;
	unsigned int i;
	int n;

	if (d->http) {
		const struct bp_httpd_stats *hs = bp_httpd__stats(d->http);
		uint64_t refused = hs->rejected_busy + hs->rejected_peer;

		/* this scrape's own answer is not built yet: count it */
		d->self.http_requests = hs->responses + refused + 1;
		d->self.http_errors = hs->client_errors + hs->server_errors + refused;
		d->self.http_connections = bp_httpd__conns(d->http);
		d->self.http_rejected[BP_HTTP_REJECT_BUSY] = hs->rejected_busy;
		d->self.http_rejected[BP_HTTP_REJECT_PEER] = hs->rejected_peer;
		d->self.http_rejected[BP_HTTP_REJECT_SLOTS] = hs->rejected_slots;
		d->self.http_rejected[BP_HTTP_REJECT_UNAUTHORIZED] = d->unauthorized;
		d->self.http_rejected[BP_HTTP_REJECT_FORBIDDEN] = d->forbidden;
		d->self.http_evicted = hs->evicted;
		d->self.http_timeouts[BP_HTTP_TIMEOUT_HEAD] = hs->head_timeouts;
		d->self.http_timeouts[BP_HTTP_TIMEOUT_WRITE] = hs->write_timeouts;
		d->self.http_timeouts[BP_HTTP_TIMEOUT_HELD] = hs->held_timeouts;
	}

	if (!getrusage(RUSAGE_SELF, &ru))
		d->self.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
				ru.ru_stime.tv_usec / 1e6;
	d->self.rss_bytes = rss_bytes();
	if (!d->s) {
		d->self.bpf_run_s = -1;
		d->self.nr_progs = 0;
		return;
	}
	/* the total from the same reads as the programs': one adds up to the other */
	n = bp_loader__prog_runs(d->s->loader, d->self.progs, BP_PROG_RUNS_MAX);
	d->self.nr_progs = n > 0 ? (unsigned int)n : 0;
	for (i = 0, run = 0; i < d->self.nr_progs; i++)
		run += d->self.progs[i].ns;
	d->self.bpf_run_s = n < 0 ? -1 : run / 1e9;
	d->self.processes_known = bp_session__known(d->s);
	d->self.processes_exited = bp_session__known_exited(d->s);
	d->self.process_exits = bp_session__exits_noticed(d->s);
	bp_session__facts(d->s, &d->self.facts_exec, &d->self.facts_proc, &d->self.facts_fork,
			  &d->self.facts_gone);
	bp_session__maps_sources(d->s, &d->self.maps_proc, &d->self.maps_exit);
	bp_syms__stats(d->s->syms, &ss);
	d->self.sym_processes = ss.processes;
	d->self.sym_files = ss.files;
	d->self.sym_string_bytes = ss.string_bytes;
	d->self.sym_lines_budget = ss.dwarf_over_budget;
	d->self.sym_lines_distro = ss.dwarf_root_skipped;
	if (d->s->unwind) {
		struct bp_unwind_stats us;

		bp_unwind__stats(d->s->unwind, &us);
		d->self.unwind = true;
		d->self.unwind_budget = us.budget_bytes;
		d->self.unwind_kernel = us.kernel_bytes;
		d->self.unwind_used = us.used_bytes;
		d->self.unwind_procs = us.procs_bytes;
		d->self.unwind_files = us.files;
	}
	/* hash maps without preallocation are charged by their elements: read again */
	d->self.map_bytes = bp_loader__map_bytes(d->s->loader) + d->self.unwind_kernel;
	d->self.tls_bytes = bp_loader__thread_storage_bytes(d->s->loader);
	d->self.drains = bp_collect__stats(d->s->collect)->drains;
	d->self.exec_drains = d->s->exec_drains;
	d->self.exec_images_kept = d->s->exec_images_kept;
	d->self.busy_explained = d->s->busy_explained;
}

static void free_last(struct bp_daemon *d)
{
	bp_summary_free(&d->last_sum);
	if (d->last_view != d->last)
		bp_profile__free(d->last_view);
	bp_profile__free(d->last);
}

int bp_daemon__close_window(struct bp_daemon *d)
{
	uint64_t t0 = bp_thread_cpu_ns(), t1, t2;
	struct bp_summary sum = {};
	struct bp_profile *view;
	uint32_t i, n = 0;

	if (!d->window)
		return 0;
	if (d->s)
		bp_session__evidence(d->s, d->window);
	/*
	 * The previous window goes first: it is on disk already, and held
	 * while this one is summarized it added its own size, 2-2.5 MiB under
	 * the mixed load, to the agent's peak at every close.
	 */
	if (d->have_last) {
		free_last(d);
		d->have_last = false;
	}
	/* Python processes in the Python view; the .pb.gz keeps every frame */
	view = bp_python_has_frames(d->window) ? bp_python_view(d->window) : d->window;
	if (!view || bp_summarize(view, SUMMARY_HOT, &sum) || bp_verdicts(view, &sum)) {
		bp_err("out of memory while summarizing a window");
		bp_summary_free(&sum);
		if (view != d->window)
			bp_profile__free(view);
		return -ENOMEM;
	}
	d->last = d->window;
	d->last_view = view;
	d->window = NULL;
	d->last_sum = sum;
	d->have_last = true;
	d->seq++;
	d->self.windows++;
	for (i = 0; i < 4; i++) {
		d->self.map_fill[i] = d->peak_fill[i];
		d->peak_fill[i] = 0;
	}
	if (bp_dev_totals_add(&d->devs, &d->nr_devs, d->last))
		bp_warn("out of memory adding up the block devices");
	bp_counters_add(&d->self.bpf, d->self.ucounts, &d->last->stats, d->last->ucounts);
	t1 = bp_thread_cpu_ns();
	write_window(d);
	t2 = bp_thread_cpu_ns();
	if (d->s) {
		n = bp_session__retire(d->s);
		d->self.processes_forgotten += n;
		trim_heap();
		bp_dbg("agent: window %" PRIu64 " closed, %u gone processes forgotten, %u known, "
		       "RSS %" PRIu64 " bytes; CPU ms: summary %.1f, files %.1f, retire %.1f",
		       d->seq, n, bp_session__known(d->s), rss_bytes(), (t1 - t0) / 1e6,
		       (t2 - t1) / 1e6, (bp_thread_cpu_ns() - t2) / 1e6);
	}
	d->window = bp_profile__new_like(d->last, d->last->end_ns);
	if (!d->window) {
		bp_err("out of memory starting a window");
		return -ENOMEM;
	}
	d->window_end = d->last->end_ns + (uint64_t)(d->o.interval_s * 1e9);
	return 0;
}

static void answer_capture(struct bp_daemon *d, struct capture *c)
{
	struct bp_buf b = BP_BUF_INIT;
	static const char *const hdr[] = {
		"Content-Disposition: attachment; filename=\"profile.pb.gz\"", NULL,
	};

	if (bp_pprof_write(c->p, &b))
		bp_httpd__respond_text(d->http, c->id, 500, "cannot encode the profile\n");
	else
		bp_httpd__respond(d->http, c->id, 200, "application/octet-stream", b.data, b.len, hdr);
	bp_buf_free(&b);
	bp_profile__free(c->p);
	*c = d->caps[--d->nr_caps];
}

int bp_daemon__add_slice(struct bp_daemon *d, const struct bp_profile *sl)
{
	uint32_t i;
	int err;

	if (!d->window) {
		d->window = bp_profile__new_like(sl, sl->start_ns);
		if (!d->window) {
			bp_err("out of memory starting a window");
			return -ENOMEM;
		}
		d->window_end = sl->start_ns + (uint64_t)(d->o.interval_s * 1e9);
	}
	d->self.slices++;
	err = bp_profile__merge(d->window, sl);
	for (i = 0; !err && i < d->nr_caps; i++)
		err = bp_profile__merge(d->caps[i].p, sl);
	if (err) {
		bp_err("out of memory adding a slice");
		return err;
	}
	for (i = 0; i < d->nr_caps;) {
		if (!d->http || !bp_httpd__pending(d->http, d->caps[i].id)) {
			/* the client went away: nothing to answer */
			bp_profile__free(d->caps[i].p);
			d->caps[i] = d->caps[--d->nr_caps];
		} else if (--d->caps[i].slices_left == 0) {
			answer_capture(d, &d->caps[i]);
		} else {
			i++;
		}
	}
	return 0;
}

/* a slice is over: from the session into the window and every capture in progress */
static int slice(struct bp_daemon *d)
{
	const struct bp_collect_stats *cs;
	const struct bp_loader *l = d->s->loader;
	struct bp_profile *sl = NULL;
	double fill[4];
	uint32_t i;
	int err;
	/*
	 * A second with little in the maps costs nothing (collect/drainpol.h);
	 * but a capture, or a user's session through the local socket, takes
	 * a slice every second (their -d and top count slices).
	 */
	bool forced = !d->window || d->nr_caps || bp_now_ns() + 100000000ULL >= d->window_end ||
		      (d->local && bp_local__stats(d->local)->sessions);
	enum bp_drain_need need = bp_session__due(d->s, forced);

	if (need == BP_DRAIN_NONE)
		return 0;
	err = forced ? bp_session__rotate(d->s, &sl) :
		       bp_session__drain(d->s, need == BP_DRAIN_FULL);
	if (err)
		return err;
	cs = bp_collect__stats(d->s->collect);
	fill[0] = (double)cs->last_rows / l->counts_entries;
	fill[1] = (double)cs->last_off_rows / l->off_entries;
	fill[2] = (double)cs->last_kstacks / l->stack_entries;
	fill[3] = (double)cs->last_ustacks / l->stack_entries;
	for (i = 0; i < 4; i++)
		if (fill[i] > d->peak_fill[i])
			d->peak_fill[i] = fill[i];
	if (!sl)
		return 0;
	err = bp_daemon__add_slice(d, sl);
	if (!err && d->local)
		err = bp_local__slice(d->local, sl);
	bp_profile__free(sl);
	if (err)
		return err;
	if (bp_now_ns() + 100000000ULL >= d->window_end)
		return bp_daemon__close_window(d);
	return 0;
}

/* ----------------------------------------------------------------- HTTP */

static int respond_buf(struct bp_daemon *d, uint64_t id, int status, const char *type,
		       struct bp_buf *b)
{
	int err = bp_httpd__respond(d->http, id, status, type, b->data, b->len, NULL);

	bp_buf_free(b);
	return err;
}

static int error(struct bp_daemon *d, uint64_t id, int status, const char *msg)
{
	return bp_httpd__respond_text(d->http, id, status, msg);
}

static int capture(struct bp_daemon *d, const struct bp_httpd_req *req)
{
	char val[32], *end;
	long secs = 30;
	int r = bp_httpd_query_get(req->query, "seconds", val, sizeof(val));
	struct capture *c;
	struct bp_profile *sl;
	bool fresh = false;

	if (r && r != -ENOENT)
		return error(d, req->id, 400, "bad query\n");
	if (!r) {
		errno = 0;
		secs = strtol(val, &end, 10);
		if (errno || end == val || *end || secs < 1 || secs > BP_DAEMON_MAX_SECONDS)
			return error(d, req->id, 400, "seconds must be a whole number from 1 to 300\n");
	}
	if (d->nr_caps == BP_DAEMON_MAX_CAPTURES)
		return error(d, req->id, 503, "too many profiles in progress\n");
	if (!d->window)
		return error(d, req->id, 503, "not recording yet\n");
	/*
	 * With no capture, the slice in progress may hold seconds (drains
	 * are lazy): into the window first. The capture then starts now, and
	 * its first slice is the part of a second up to the next.
	 */
	if (d->s && !d->nr_caps && !bp_session__rotate(d->s, &sl) && sl) {
		bp_daemon__add_slice(d, sl);
		bp_profile__free(sl);
		fresh = true;
	}
	c = &d->caps[d->nr_caps];
	c->p = bp_profile__new_like(d->window, bp_now_ns());
	if (!c->p)
		return error(d, req->id, 503, "out of memory\n");
	/*
	 * N whole slices, the one in progress first: N seconds of data,
	 * answered at most N seconds from now; N and a part when it started now
	 */
	c->id = req->id;
	c->slices_left = secs + fresh;
	d->nr_caps++;
	/* whatever happens to the slices, the client is not held much past its seconds */
	bp_httpd__hold(d->http, req->id, secs * 1000 + d->o.capture_margin_ms);
	return BP_HTTPD_HELD;
}

static int handle(void *ctx, struct bp_httpd *h, const struct bp_httpd_req *req)
{
	static const char *const challenge[] = { "WWW-Authenticate: Bearer realm=\"boundprof\"", NULL };
	struct bp_daemon *d = ctx;
	struct bp_buf b = BP_BUF_INIT;
	bool detail;

	/* /healthz says "ok" and nothing else: probes need no token */
	if (!strcmp(req->path, "/healthz"))
		return bp_httpd__respond_text(h, req->id, 200, "ok\n");
	if (d->token && !bp_token_ok(d->token, req->authorization)) {
		static const char text[] = "a bearer token is needed (Authorization: Bearer TOKEN)\n";

		d->unauthorized++;
		return bp_httpd__respond(h, req->id, 401, "text/plain; charset=utf-8", text,
					 sizeof(text) - 1, challenge);
	}
	/*
	 * No token: only root's own loopback connections (the kernel's socket
	 * table says whose) get what names processes; everyone else gets
	 * aggregates, and profiles their own programs through the local socket.
	 */
	detail = d->token || req->peer_uid == 0;
	if (!strcmp(req->path, "/metrics")) {
		update_self(d);
		if (bp_metrics_write(&b, d->have_last && detail ? d->last_view : NULL,
				     d->have_last && detail ? &d->last_sum : NULL, d->o.top, d->devs,
				     d->nr_devs, &d->self) ||
		    (d->local && bp_local_metrics(&b, bp_local__stats(d->local)))) {
			bp_buf_free(&b);
			return error(d, req->id, 500, "cannot write the metrics\n");
		}
		return respond_buf(d, req->id, 200, BP_PROM_CONTENT_TYPE, &b);
	}
	if (!detail && (!strcmp(req->path, "/debug/pprof/profile") || !strcmp(req->path, "/report") ||
			!strcmp(req->path, "/flamegraph"))) {
		d->forbidden++;
		return error(d, req->id, 403,
			     "only root sees other users' processes without a token: use --token-file,"
			     " or profile your own programs with boundprof record (docs/agent.md)\n");
	}
	if (!strcmp(req->path, "/debug/pprof/profile"))
		return capture(d, req);
	if (!strcmp(req->path, "/report") || !strcmp(req->path, "/flamegraph")) {
		struct bp_flame_opts fo = { .format = BP_FLAME_HTML, .initial_view = BP_VIEW_WALL,
					    .title = "boundprof agent: last window" };
		bool json = req->path[1] == 'r';
		struct bp_profile *fv = NULL;
		int err;

		if (!d->have_last)
			return error(d, req->id, 503, "no window closed yet\n");
		/* a box per function, as record draws it (model/funcview.h) */
		if (!json) {
			fv = bp_func_view(d->last_view);
			if (!fv)
				return error(d, req->id, 500, "cannot render\n");
		}
		err = json ? bp_export_json(d->last_view, &d->last_sum, true, &b) :
			     bp_export_flame(fv, &d->last_sum, &fo, &b);
		bp_profile__free(fv);
		if (err) {
			bp_buf_free(&b);
			return error(d, req->id, 500, "cannot render\n");
		}
		return respond_buf(d, req->id, 200,
				   json ? "application/json" : "text/html; charset=utf-8", &b);
	}
	if (!strcmp(req->path, "/"))
		return bp_httpd__respond_text(h, req->id, 200,
					      "boundprof agent: /metrics /debug/pprof/profile?seconds=N "
					      "/report /flamegraph /healthz\n");
	return error(d, req->id, 404, "not found\n");
}

int bp_daemon__process_http(struct bp_daemon *d)
{
	return d->http ? bp_httpd__process(d->http) : 0;
}

int bp_daemon__http_port(const struct bp_daemon *d)
{
	return d->http ? bp_httpd__port(d->http) : -1;
}

int bp_daemon__http_fd(const struct bp_daemon *d)
{
	return d->http ? bp_httpd__fd(d->http) : -1;
}

/* ------------------------------------------------------------ lifecycle */

/* this run's id: which windows in the directory are its own */
static void new_run_id(char *out)
{
	unsigned char r[BP_DAEMON_RUN_LEN / 2];
	struct timespec ts;
	size_t i;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		/* early boot, no entropy yet: unique enough for telling runs apart */
		clock_gettime(CLOCK_REALTIME, &ts);
		for (i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)((ts.tv_nsec ^ getpid() ^ ts.tv_sec) >> (i * 8));
	}
	for (i = 0; i < sizeof(r); i++)
		sprintf(out + 2 * i, "%02x", r[i]);
}

int bp_daemon__new(struct bp_daemon **out, const struct bp_daemon_opts *o)
{
	struct bp_daemon *d;
	int err;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->o = *o;
	d->ep = -1;
	d->dirfd = -1;
	d->self.bpf_run_s = -1;
	err = bp_daemon_check(o);
	if (err)
		goto err_out;
	new_run_id(d->run);
	if (o->token_file) {
		const char *why;

		err = bp_token_load(o->token_file, &d->token, &why);
		if (err) {
			bp_err("cannot use --token-file %s: %s", o->token_file, why);
			goto err_out;
		}
	}
	if (d->o.dir) {
		err = open_dir(d);
		if (err)
			goto err_out;
		sweep_temps(d);
	}
	*out = d;
	return 0;

err_out:
	bp_daemon__free(d);
	return err;
}

int bp_daemon__listen(struct bp_daemon *d)
{
	int err;
	struct bp_httpd_opts ho = { .priority_paths = priority_paths };

	if (!d->o.listen || d->http)
		return 0;
	d->http = bp_httpd__new(d->o.listen, handle, d, &ho);
	if (!d->http) {
		err = -errno;
		bp_err("cannot listen on %s: %s", d->o.listen, strerror(-err));
		return err;
	}
	return 0;
}

static int add_fd(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* a user's dump, taken here as root's `boundprof dump` takes it */
static int user_dump(void *ctx, uint32_t pid, bool json, struct bp_buf *out)
{
	struct bp_dump *dump = NULL;
	int err;

	(void)ctx;
	err = bp_dump__take((pid_t)pid, &dump);
	if (!err)
		err = bp_dump_write(dump, json, out);
	bp_dump__free(dump);
	return err;
}

/* a user's recording gets the evidence a window gets */
static void user_evidence(void *ctx, struct bp_profile *p)
{
	struct bp_daemon *d = ctx;

	if (d->s)
		bp_session__evidence(d->s, p);
}

int bp_daemon__start(struct bp_daemon *d)
{
	int err;

	err = bp_daemon__listen(d);
	if (!err)
		err = bp_session__open(&d->s, &d->o.session);
	if (!err)
		err = bp_session__start(d->s);
	if (err)
		return err;
	/* our own BPF run time for /metrics; costs two clock reads per program run */
	if (d->o.bpf_stats && (err = bp_loader__count_run_time(d->s->loader)))
		bp_warn("BPF run time will not be counted: %s", strerror(-err));
	d->window = bp_profile__new_like(d->s->prof, d->s->prof->start_ns);
	if (!d->window) {
		bp_err("out of memory starting a window");
		return -ENOMEM;
	}
	d->window_end = d->s->prof->start_ns + (uint64_t)(d->o.interval_s * 1e9);
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	err = d->ep < 0 ? -errno : add_fd(d->ep, bp_session__events_fd(d->s));
	if (!err && d->http)
		err = add_fd(d->ep, bp_httpd__fd(d->http));
	if (!err && d->o.local.path && d->o.local.access != BP_LOCAL_NOBODY) {
		d->local = bp_local__new(&d->o.local, d->o.session.hz);
		if (!d->local && errno == EADDRINUSE)
			bp_warn("another agent serves %s: this one serves no local socket",
				d->o.local.path);
		else if (!d->local)
			return -errno;
		else
			err = add_fd(d->ep, bp_local__fd(d->local));
		if (d->local) {
			bp_local__set_evidence(d->local, user_evidence, d);
			bp_local__set_dump(d->local, user_dump, d);
		}
	}
	if (err) {
		bp_err("cannot set up the event loop: %s", strerror(-err));
		return err;
	}
	/*
	 * The first events and the kernel's symbols now, while we may still
	 * read kallsyms' addresses (kptr_restrict): the caller may drop
	 * CAP_SYSLOG once we return.
	 */
	err = bp_session__tick(d->s);
	if (err)
		return err;
	bp_info("agent: windows of %.0f s into %s, HTTP on %s", d->o.interval_s,
		d->o.dir ? d->o.dir : "(none)", d->o.listen ? d->o.listen : "(off)");
	return 0;
}

/* stopping: the partial window is written, and captures get what they have */
static void finish(struct bp_daemon *d)
{
	struct epoll_event evs[8];
	struct bp_profile *sl;
	int i, err;

	/* the window then ends at the last slice that made it in: the log says so */
	err = bp_session__rotate(d->s, &sl);
	if (err)
		bp_err("agent: the last drain failed (%s); the last window ends at the slice before",
		       strerror(-err));
	if (!err && sl) {
		bp_daemon__add_slice(d, sl);
		bp_profile__free(sl);
	}
	if (!bp_daemon__close_window(d) && d->stop > 0)
		bp_info("agent: stopped by %s; last window: %s/%s.{pb.gz,json}", strsignal(d->stop),
			d->o.dir ? d->o.dir : "(none)", d->last_name);
	while (d->nr_caps)
		answer_capture(d, &d->caps[0]);
	if (d->local)
		bp_local__finish(d->local);
	/* give the answers a moment to leave */
	for (i = 0; d->http && i < 20 && bp_httpd__conns(d->http); i++) {
		epoll_wait(d->ep, evs, 8, 50);
		bp_httpd__process(d->http);
	}
}

/* SIGHUP: the directory again (re-created if it went), and the token again */
static void reopen(struct bp_daemon *d)
{
	const char *why;
	char *token;

	if (d->o.dir)
		open_dir(d);
	if (d->o.token_file) {
		if (bp_token_load(d->o.token_file, &token, &why)) {
			bp_warn("--token-file %s: %s; the token stays as it was", d->o.token_file,
				why);
			return;
		}
		free(d->token);
		d->token = token;
	}
}

int bp_daemon__run(struct bp_daemon *d)
{
	struct epoll_event evs[8];
	uint64_t next_slice = bp_now_ns() + SLICE_NS;
	int err = 0;

	while (!d->stop) {
		uint64_t now = bp_now_ns();
		int timeout = now >= next_slice ? 0 : (int)((next_slice - now) / 1000000) + 1;
		bool http, local;
		int i, n;

		/* each wake-up costs; only a memory probe under way needs 100 ms */
		if (timeout > 100 && bp_session__wants_ticks(d->s))
			timeout = 100;
		n = epoll_wait(d->ep, evs, 8, timeout);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			bp_err("event loop failed: %s", strerror(-err));
			break;
		}
		/*
		 * The servers only when their epoll is ready (a request, a
		 * write that can go on, the HTTP timer), and at each slice for
		 * the local server's deadlines: asking them at every wake-up
		 * was three system calls each time (their epolls, the HTTP
		 * timer rearmed), the first after a wake-up costing 30-60 us
		 * on a guest, at 40 wake-ups a second under process churn.
		 */
		http = local = bp_now_ns() >= next_slice;
		for (i = 0; i < n; i++) {
			if (d->http && evs[i].data.fd == bp_httpd__fd(d->http))
				http = true;
			else if (d->local && evs[i].data.fd == bp_local__fd(d->local))
				local = true;
		}
		err = bp_session__tick(d->s);
		if (!err && http)
			err = bp_daemon__process_http(d);
		if (!err && d->local && local)
			err = bp_local__process(d->local);
		if (err)
			break;
		if (d->reopen) {
			d->reopen = 0;
			reopen(d);
		}
		if (bp_now_ns() >= next_slice) {
			err = slice(d);
			if (err)
				break;
			next_slice += SLICE_NS;
			if (next_slice < bp_now_ns())
				next_slice = bp_now_ns() + SLICE_NS;
		}
	}
	if (d->window)
		finish(d);
	return err;
}

void bp_daemon__free(struct bp_daemon *d)
{
	if (!d)
		return;
	if (d->ep >= 0)
		close(d->ep);
	while (d->nr_caps)
		bp_profile__free(d->caps[--d->nr_caps].p);
	if (d->have_last)
		free_last(d);
	bp_profile__free(d->window);
	bp_httpd__free(d->http);
	bp_local__free(d->local);
	bp_session__free(d->s);
	if (d->dirfd >= 0)
		close(d->dirfd);
	if (d->token)
		explicit_bzero(d->token, strlen(d->token));
	free(d->token);
	free(d->devs);
	free(d);
}
