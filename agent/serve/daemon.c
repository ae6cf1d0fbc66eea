// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's daemon: slices into windows, windows into files and HTTP
 * answers. See daemon.h and docs/agent.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/verdict.h"
#include "collect/collect.h"
#include "collect/loader.h"
#include "collect/session.h"
#include "export/flame.h"
#include "export/folded.h"
#include "export/pprof.h"
#include "export/report_json.h"
#include "model/merge.h"
#include "model/profile.h"
#include "proc/procinfo.h"
#include "serve/daemon.h"
#include "serve/httpd.h"
#include "serve/metrics.h"
#include "serve/prom.h"
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
	int ep;
	struct bp_profile *window;	/* being filled from slices */
	uint64_t window_end;
	struct bp_profile *last;	/* the last closed window ... */
	struct bp_summary last_sum;	/* ... and its summary */
	bool have_last;
	struct capture caps[BP_DAEMON_MAX_CAPTURES];
	uint32_t nr_caps;
	struct bp_dev_totals *devs;
	uint32_t nr_devs;
	struct bp_agent_self self;
	uint64_t seq;
	char last_name[96];		/* stem of the last window written */
	double peak_fill[4];
	volatile sig_atomic_t stop;	/* the signal that asked, or -1 */
	volatile sig_atomic_t reopen;
};

void bp_daemon_opts_default(struct bp_daemon_opts *o)
{
	*o = (struct bp_daemon_opts){
		.interval_s = 10,
		.dir = "/var/lib/boundprof",
		.keep = 60,
		.top = 20,
		.bpf_stats = true,
		.listen = "127.0.0.1:9741",
		.session = {
			.hz = 99,
			.offcpu = true,
			.offcpu_ustacks = 2,
			.no_preempt_stacks = true,
			.drain_interval_s = 1.0,
		},
	};
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
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return access(path, W_OK) ? -errno : 0;
}

/* ---------------------------------------------------------------- files */

int bp_window_stem(char *out, size_t size, int64_t end_unix_s, uint64_t seq)
{
	time_t t = end_unix_s;
	char when[32];
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	if (snprintf(out, size, BP_DAEMON_FILE_PREFIX "%s-%08" PRIu64, when, seq) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ours(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, BP_DAEMON_FILE_PREFIX, strlen(BP_DAEMON_FILE_PREFIX)) &&
	       ((n > 6 && !strcmp(name + n - 6, ".pb.gz")) || (n > 5 && !strcmp(name + n - 5, ".json")));
}

static size_t stem_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot ? (size_t)(dot - name) : strlen(name);
}

/*
 * A window being written lives under ".NAME.XXXXXX" until it is renamed;
 * an agent killed with SIGKILL (or a machine losing power) leaves it behind,
 * and retention, which counts finished windows only, would never see it.
 * Run at start-up, before this agent writes anything.
 */
static void sweep_temps(const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.' ||
		    strncmp(de->d_name + 1, BP_DAEMON_FILE_PREFIX, strlen(BP_DAEMON_FILE_PREFIX)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno != ENOENT)
			bp_warn("cannot remove %s: %s", path, strerror(errno));
		else
			bp_info("removed %s, left by an agent that was killed mid-write", path);
	}
	closedir(d);
}

int bp_retain(const char *dir, uint32_t keep, uint64_t keep_bytes)
{
	char **names = NULL, path[4096], **n;
	size_t nr = 0, cap = 0, i, j, first;
	uint64_t bytes = 0, windows = 0;
	struct dirent *de;
	struct stat st;
	int removed = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!ours(de->d_name))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 64;
			n = realloc(names, cap * sizeof(*names));
			if (!n)
				break;
			names = n;
		}
		names[nr] = strdup(de->d_name);
		if (names[nr])
			nr++;
	}
	closedir(d);
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_names);
	/* newest last (the stem holds the time and sequence): walk back by window */
	for (i = nr; i > 0; i = first) {
		uint64_t size = 0;
		bool kept;

		first = i - 1;
		while (first > 0 && stem_len(names[first - 1]) == stem_len(names[i - 1]) &&
		       !strncmp(names[first - 1], names[i - 1], stem_len(names[i - 1])))
			first--;
		for (j = first; j < i; j++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[j]);
			if (!stat(path, &st))
				size += st.st_size;
		}
		windows++;
		bytes += size;
		/* the newest window is kept whatever its size: never an empty directory */
		kept = windows == 1 || (windows <= keep && (!keep_bytes || bytes <= keep_bytes));
		for (j = first; !kept && j < i; j++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[j]);
			if (unlink(path) && errno != ENOENT)
				bp_warn("cannot remove %s: %s", path, strerror(errno));
		}
		removed += !kept;
	}
	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return removed;
}

/* a profile in the directory the ordinary way: mode as the umask says */
static mode_t file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

static int write_file(const char *dir, const char *name, const struct bp_buf *b)
{
	struct bp_afile f = BP_AFILE_INIT;
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = bp_afile_open(&f, AT_FDCWD, path, file_mode());
	if (!err)
		err = bp_afile_commit(&f, b->data, b->len);
	if (err)
		bp_warn("cannot write %s: %s", path, strerror(-err));
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

	if (!d->o.dir)
		return;
	bp_window_stem(stem, sizeof(stem), end, d->seq);
	/* write_file() says why it failed; encoding can only run out of memory */
	snprintf(name, sizeof(name), "%s.pb.gz", stem);
	err = bp_pprof_write(d->last, &b);
	if (!err)
		err = write_file(d->o.dir, name, &b) ?: 1;
	bp_buf_reset(&b);
	if (err == 1) {
		snprintf(name, sizeof(name), "%s.json", stem);
		err = bp_export_json(d->last, &d->last_sum, true, &b);
		if (!err)
			err = write_file(d->o.dir, name, &b) ?: 1;
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
	bp_retain(d->o.dir, d->o.keep, d->o.keep_bytes);
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

static void update_self(struct bp_daemon *d)
{
	struct bp_syms_stats ss;
	struct rusage ru;
	int64_t run;

	if (d->http) {
		const struct bp_httpd_stats *hs = bp_httpd__stats(d->http);

		/* this scrape's own answer is not built yet: count it */
		d->self.http_requests = hs->responses + hs->rejected_busy + 1;
		d->self.http_errors = hs->client_errors + hs->server_errors + hs->rejected_busy;
	}

	if (!getrusage(RUSAGE_SELF, &ru))
		d->self.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
				ru.ru_stime.tv_usec / 1e6;
	d->self.rss_bytes = rss_bytes();
	if (!d->s) {
		d->self.bpf_run_s = -1;
		return;
	}
	run = bp_loader__run_ns(d->s->loader);
	d->self.bpf_run_s = run < 0 ? -1 : run / 1e9;
	d->self.processes_known = bp_session__known(d->s);
	bp_syms__stats(d->s->syms, &ss);
	d->self.sym_processes = ss.processes;
	d->self.sym_files = ss.files;
	d->self.sym_string_bytes = ss.string_bytes;
	d->self.drains = bp_collect__stats(d->s->collect)->drains;
	d->self.exec_drains = bp_collect__stats(d->s->collect)->light_drains;
}

int bp_daemon__close_window(struct bp_daemon *d)
{
	struct bp_summary sum = {};
	uint32_t i, n = 0;

	if (!d->window)
		return 0;
	if (d->s)
		bp_session__evidence(d->s, d->window);
	if (bp_summarize(d->window, SUMMARY_HOT, &sum) || bp_verdicts(d->window, &sum)) {
		bp_err("out of memory while summarizing a window");
		bp_summary_free(&sum);
		return -ENOMEM;
	}
	if (d->have_last) {
		bp_summary_free(&d->last_sum);
		bp_profile__free(d->last);
	}
	d->last = d->window;
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
	write_window(d);
	if (d->s) {
		n = bp_session__retire(d->s);
		/* what a burst of processes left behind goes back to the system */
		malloc_trim(0);
		bp_dbg("agent: window %" PRIu64 " closed, %u gone processes forgotten, %u known, "
		       "RSS %" PRIu64 " bytes", d->seq, n, bp_session__known(d->s), rss_bytes());
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
	struct bp_profile *sl;
	double fill[4];
	uint32_t i;
	int err;

	err = bp_session__rotate(d->s, &sl);
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
	err = bp_daemon__add_slice(d, sl);
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
	c = &d->caps[d->nr_caps];
	c->p = bp_profile__new_like(d->window, bp_now_ns());
	if (!c->p)
		return error(d, req->id, 503, "out of memory\n");
	/*
	 * N whole slices, the one in progress first: N seconds of data,
	 * answered at most N seconds from now
	 */
	c->id = req->id;
	c->slices_left = secs;
	d->nr_caps++;
	return BP_HTTPD_HELD;
}

static int handle(void *ctx, struct bp_httpd *h, const struct bp_httpd_req *req)
{
	struct bp_daemon *d = ctx;
	struct bp_buf b = BP_BUF_INIT;

	if (!strcmp(req->path, "/healthz"))
		return bp_httpd__respond_text(h, req->id, 200, "ok\n");
	if (!strcmp(req->path, "/metrics")) {
		update_self(d);
		if (bp_metrics_write(&b, d->have_last ? d->last : NULL,
				     d->have_last ? &d->last_sum : NULL, d->o.top, d->devs, d->nr_devs,
				     &d->self)) {
			bp_buf_free(&b);
			return error(d, req->id, 500, "cannot write the metrics\n");
		}
		return respond_buf(d, req->id, 200, BP_PROM_CONTENT_TYPE, &b);
	}
	if (!strcmp(req->path, "/debug/pprof/profile"))
		return capture(d, req);
	if (!strcmp(req->path, "/report") || !strcmp(req->path, "/flamegraph")) {
		struct bp_flame_opts fo = { .format = BP_FLAME_HTML, .initial_view = BP_VIEW_WALL,
					    .title = "boundprof agent: last window" };
		bool json = req->path[1] == 'r';

		if (!d->have_last)
			return error(d, req->id, 503, "no window closed yet\n");
		if (json ? bp_export_json(d->last, &d->last_sum, true, &b) :
			   bp_export_flame(d->last, &d->last_sum, &fo, &b)) {
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
	d->self.bpf_run_s = -1;
	if (d->o.dir) {
		err = mkdirs(d->o.dir);
		if (err) {
			bp_err("cannot write to --dir %s: %s", d->o.dir, strerror(-err));
			goto err_out;
		}
		sweep_temps(d->o.dir);
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

	if (!d->o.listen || d->http)
		return 0;
	d->http = bp_httpd__new(d->o.listen, handle, d, NULL);
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
	d->self.map_bytes = bp_loader__map_bytes(d->s->loader);
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
	if (err) {
		bp_err("cannot set up the event loop: %s", strerror(-err));
		return err;
	}
	bp_info("agent: windows of %.0f s into %s, HTTP on %s", d->o.interval_s,
		d->o.dir ? d->o.dir : "(none)", d->o.listen ? d->o.listen : "(off)");
	return 0;
}

/* stopping: the partial window is written, and captures get what they have */
static void finish(struct bp_daemon *d)
{
	struct epoll_event evs[8];
	struct bp_profile *sl;
	int i;

	if (!bp_session__rotate(d->s, &sl) && sl) {
		bp_daemon__add_slice(d, sl);
		bp_profile__free(sl);
	}
	if (!bp_daemon__close_window(d) && d->stop > 0)
		bp_info("agent: stopped by %s; last window: %s/%s.{pb.gz,json}", strsignal(d->stop),
			d->o.dir ? d->o.dir : "(none)", d->last_name);
	while (d->nr_caps)
		answer_capture(d, &d->caps[0]);
	/* give the answers a moment to leave */
	for (i = 0; d->http && i < 20 && bp_httpd__conns(d->http); i++) {
		epoll_wait(d->ep, evs, 8, 50);
		bp_httpd__process(d->http);
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

		/* each wake-up costs; only a memory probe under way needs 100 ms */
		if (timeout > 100 && bp_session__wants_ticks(d->s))
			timeout = 100;
		if (epoll_wait(d->ep, evs, 8, timeout) < 0 && errno != EINTR) {
			err = -errno;
			bp_err("event loop failed: %s", strerror(-err));
			break;
		}
		err = bp_session__tick(d->s);
		if (!err)
			err = bp_daemon__process_http(d);
		if (err)
			break;
		if (d->reopen) {
			d->reopen = 0;
			if (d->o.dir && (err = mkdirs(d->o.dir)))
				bp_warn("cannot re-create %s: %s", d->o.dir, strerror(-err));
			err = 0;
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
	if (d->have_last) {
		bp_summary_free(&d->last_sum);
		bp_profile__free(d->last);
	}
	bp_profile__free(d->window);
	bp_httpd__free(d->http);
	bp_session__free(d->s);
	free(d->devs);
	free(d);
}
