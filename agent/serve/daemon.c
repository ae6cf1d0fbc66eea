// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof agent: always on, system-wide. Records in one-second slices,
 * folds them into windows (default 10 s); each closed window is written to
 * --dir as pprof + JSON (atomically, newest N kept) and served over HTTP
 * with Prometheus metrics, pprof captures, the report and a flame graph.
 * See docs/agent.md.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "util/buf.h"
#include "cli.h"
#include "collect/collect.h"
#include "export/flame.h"
#include "export/folded.h"
#include "export/report_json.h"
#include "serve/httpd.h"
#include "collect/loader.h"
#include "util/log.h"
#include "model/merge.h"
#include "serve/metrics.h"
#include "output.h"
#include "export/pprof.h"
#include "proc/procinfo.h"
#include "model/profile.h"
#include "serve/prom.h"
#include "render.h"
#include "collect/session.h"
#include "symbolize/symbols.h"
#include "analyze/verdict.h"

#define DEFAULT_LISTEN	"127.0.0.1:9741"
#define DEFAULT_DIR	"/var/lib/boundprof"
#define MAX_CAPTURES	8
#define MAX_SECONDS	300
#define FILE_PREFIX	"boundprof-"

struct capture {
	uint64_t id;		/* the held HTTP request */
	uint32_t slices_left;
	struct bp_profile *p;
};

struct agent {
	double interval;
	const char *dir;
	uint32_t keep;
	uint64_t keep_bytes;
	const char *listen;
	uint32_t top;
	bool bpf_stats;
	struct bp_session *s;
	struct bp_httpd *http;
	struct bp_profile *window;	/* being filled from slices */
	uint64_t window_end;
	struct bp_profile *last;	/* the last closed window ... */
	struct bp_summary last_sum;	/* ... and its summary */
	bool have_last;
	struct capture caps[MAX_CAPTURES];
	uint32_t nr_caps;
	struct bp_dev_totals *devs;
	uint32_t nr_devs;
	struct bp_agent_self self;
	uint64_t seq;
	char last_name[96];		/* stem of the last window written */
	double peak_fill[4];
};

static volatile sig_atomic_t agent_stop, agent_hup;

static void on_stop(int sig)
{
	agent_stop = sig;
}

static void on_hup(int sig)
{
	agent_hup = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof agent [--interval SECONDS] [--dir DIR] [--keep N] [--keep-bytes SIZE]\n"
		"                       [--listen ADDR:PORT|off] [--top N] [-F HZ] [--no-offcpu]\n"
		"                       [--no-bpf-stats] [-v]\n"
		"\n"
		"  --interval S      close a window every S seconds (default 10)\n"
		"  --dir DIR         write each window's .pb.gz and .json here (default %s)\n"
		"  --keep N          keep the newest N windows (default 60)\n"
		"  --keep-bytes SIZE and at most SIZE bytes of them (K, M, G suffixes; default: no limit)\n"
		"  --listen A:P      serve HTTP here (default %s; \":P\" listens on all interfaces;\n"
		"                    \"off\" serves nothing): /metrics, /debug/pprof/profile?seconds=N,\n"
		"                    /report, /flamegraph, /healthz\n"
		"  --top N           processes with series of their own in /metrics (default 20)\n"
		"  -F HZ             on-CPU sampling frequency (default 99)\n"
		"  --no-offcpu       on-CPU sampling only\n"
		"  -v                debug detail in the log (-vv: libbpf's too)\n"
		"  --no-bpf-stats    do not have the kernel time our BPF programs\n"
		"                    (boundprof_agent_bpf_seconds_total is then absent)\n"
		"\n"
		"SIGTERM and SIGINT write the current partial window and exit; SIGHUP re-creates\n"
		"the output directory if it was removed.\n",
		DEFAULT_DIR, DEFAULT_LISTEN);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > 1e18)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
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

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ours(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, FILE_PREFIX, strlen(FILE_PREFIX)) &&
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
		    strncmp(de->d_name + 1, FILE_PREFIX, strlen(FILE_PREFIX)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && errno != ENOENT)
			bp_warn("cannot remove %s: %s", path, strerror(errno));
		else
			bp_info("removed %s, left by an agent that was killed mid-write", path);
	}
	closedir(d);
}

/*
 * Keep the newest --keep windows and at most --keep-bytes of them; a
 * window's .pb.gz and .json (same stem) stay or go together.
 */
static void retain(struct agent *a)
{
	char **names = NULL, path[4096], **n;
	size_t nr = 0, cap = 0, i, j, first;
	uint64_t bytes = 0, windows = 0;
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(a->dir);

	if (!d)
		return;
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
		bool keep;

		first = i - 1;
		while (first > 0 && stem_len(names[first - 1]) == stem_len(names[i - 1]) &&
		       !strncmp(names[first - 1], names[i - 1], stem_len(names[i - 1])))
			first--;
		for (j = first; j < i; j++) {
			snprintf(path, sizeof(path), "%s/%s", a->dir, names[j]);
			if (!stat(path, &st))
				size += st.st_size;
		}
		windows++;
		bytes += size;
		/* the newest window is kept whatever its size: never an empty directory */
		keep = windows == 1 ||
		       (windows <= a->keep && (!a->keep_bytes || bytes <= a->keep_bytes));
		for (j = first; !keep && j < i; j++) {
			snprintf(path, sizeof(path), "%s/%s", a->dir, names[j]);
			if (unlink(path) && errno != ENOENT)
				bp_warn("cannot remove %s: %s", path, strerror(errno));
		}
	}
	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
}

static int write_file(const char *dir, const char *name, const struct bp_buf *b)
{
	struct output o = {};
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	o.path = path;
	o.fd = -1;
	err = output_prepare(&o);
	if (!err)
		err = output_commit(&o, b->data, b->len);
	output_abort(&o);
	return err;
}

/* the window's files: .pb.gz to re-render anything, .json to read at once */
static void write_window(struct agent *a)
{
	int err;
	struct bp_buf b = BP_BUF_INIT;
	char stem[96], name[128], when[32];
	time_t t = (a->last->start_unix_ns + (int64_t)(a->last->end_ns - a->last->start_ns)) /
		   1000000000LL;
	struct tm tm;

	if (!a->dir)
		return;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(stem, sizeof(stem), FILE_PREFIX "%s-%08" PRIu64, when, a->seq);
	/* write_file() says why it failed; encoding can only run out of memory */
	snprintf(name, sizeof(name), "%s.pb.gz", stem);
	err = bp_pprof_write(a->last, &b);
	if (!err)
		err = write_file(a->dir, name, &b) ?: 1;
	bp_buf_reset(&b);
	if (err == 1) {
		snprintf(name, sizeof(name), "%s.json", stem);
		err = bp_export_json(a->last, &a->last_sum, true, &b);
		if (!err)
			err = write_file(a->dir, name, &b) ?: 1;
	}
	bp_buf_free(&b);
	if (err == 1) {
		snprintf(a->last_name, sizeof(a->last_name), "%s", stem);
	} else {
		/* the agent goes on: the window is still served over HTTP */
		a->self.write_errors++;
		if (err == -ENOMEM)
			bp_warn("cannot encode %s: out of memory", name);
	}
	retain(a);
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

static void update_self(struct agent *a)
{
	const struct bp_collect_stats *cs = bp_collect__stats(a->s->collect);
	struct bp_syms_stats ss;
	struct rusage ru;
	int64_t run;

	if (a->http) {
		const struct bp_httpd_stats *hs = bp_httpd__stats(a->http);

		/* this scrape's own answer is not built yet: count it */
		a->self.http_requests = hs->responses + hs->rejected_busy + 1;
		a->self.http_errors = hs->client_errors + hs->server_errors + hs->rejected_busy;
	}

	if (!getrusage(RUSAGE_SELF, &ru))
		a->self.cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
				ru.ru_stime.tv_usec / 1e6;
	a->self.rss_bytes = rss_bytes();
	run = bp_loader__run_ns(a->s->loader);
	a->self.bpf_run_s = run < 0 ? -1 : run / 1e9;
	a->self.processes_known = bp_session__known(a->s);
	bp_syms__stats(a->s->syms, &ss);
	a->self.sym_processes = ss.processes;
	a->self.sym_files = ss.files;
	a->self.sym_string_bytes = ss.string_bytes;
	a->self.drains = cs->drains;
	a->self.exec_drains = cs->light_drains;
}

static int close_window(struct agent *a)
{
	struct bp_summary sum = {};
	uint32_t i, n;

	bp_session__evidence(a->s, a->window);
	if (render_summarize(a->window, &sum))
		return -ENOMEM;
	if (a->have_last) {
		bp_summary_free(&a->last_sum);
		bp_profile__free(a->last);
	}
	a->last = a->window;
	a->last_sum = sum;
	a->have_last = true;
	a->seq++;
	a->self.windows++;
	for (i = 0; i < 4; i++) {
		a->self.map_fill[i] = a->peak_fill[i];
		a->peak_fill[i] = 0;
	}
	bp_dev_totals_add(&a->devs, &a->nr_devs, a->last);
	bp_counters_add(&a->self.bpf, a->self.ucounts, &a->last->stats, a->last->ucounts);
	write_window(a);
	n = bp_session__retire(a->s);
	/* what a burst of processes left behind goes back to the system */
	malloc_trim(0);
	bp_dbg("agent: window %" PRIu64 " closed, %u gone processes forgotten, %u known, RSS %" PRIu64
	       " bytes", a->seq, n, bp_session__known(a->s), rss_bytes());
	a->window = bp_profile__new_like(a->last, a->last->end_ns);
	if (!a->window)
		return -ENOMEM;
	a->window_end = a->last->end_ns + (uint64_t)(a->interval * 1e9);
	return 0;
}

static void answer_capture(struct agent *a, struct capture *c)
{
	struct bp_buf b = BP_BUF_INIT;
	static const char *const hdr[] = {
		"Content-Disposition: attachment; filename=\"profile.pb.gz\"", NULL,
	};

	if (bp_pprof_write(c->p, &b))
		bp_httpd__respond_text(a->http, c->id, 500, "cannot encode the profile\n");
	else
		bp_httpd__respond(a->http, c->id, 200, "application/octet-stream", b.data, b.len, hdr);
	bp_buf_free(&b);
	bp_profile__free(c->p);
	*c = a->caps[--a->nr_caps];
}

/* a slice is over: it goes into the window and into every capture in progress */
static int slice(struct agent *a)
{
	struct bp_profile *sl;
	const struct bp_collect_stats *cs;
	const struct bp_loader *l = a->s->loader;
	double fill[4];
	uint32_t i;
	int err;

	err = bp_session__rotate(a->s, &sl);
	if (err)
		return err;
	cs = bp_collect__stats(a->s->collect);
	fill[0] = (double)cs->last_rows / l->counts_entries;
	fill[1] = (double)cs->last_off_rows / l->off_entries;
	fill[2] = (double)cs->last_kstacks / l->stack_entries;
	fill[3] = (double)cs->last_ustacks / l->stack_entries;
	for (i = 0; i < 4; i++)
		if (fill[i] > a->peak_fill[i])
			a->peak_fill[i] = fill[i];
	a->self.slices++;
	err = bp_profile__merge(a->window, sl);
	for (i = 0; !err && i < a->nr_caps; i++)
		err = bp_profile__merge(a->caps[i].p, sl);
	bp_profile__free(sl);
	if (err)
		return err;
	for (i = 0; i < a->nr_caps;) {
		if (!bp_httpd__pending(a->http, a->caps[i].id)) {
			/* the client went away: nothing to answer */
			bp_profile__free(a->caps[i].p);
			a->caps[i] = a->caps[--a->nr_caps];
		} else if (--a->caps[i].slices_left == 0) {
			answer_capture(a, &a->caps[i]);
		} else {
			i++;
		}
	}
	if (bp_now_ns() + 100000000ULL >= a->window_end)
		return close_window(a);
	return 0;
}

/* ----------------------------------------------------------------- HTTP */

static int respond_buf(struct agent *a, uint64_t id, int status, const char *type,
		       struct bp_buf *b)
{
	int err = bp_httpd__respond(a->http, id, status, type, b->data, b->len, NULL);

	bp_buf_free(b);
	return err;
}

static int error(struct agent *a, uint64_t id, int status, const char *msg)
{
	return bp_httpd__respond_text(a->http, id, status, msg);
}

static int handle(void *ctx, struct bp_httpd *h, const struct bp_httpd_req *req)
{
	struct agent *a = ctx;
	struct bp_buf b = BP_BUF_INIT;
	char val[32], *end;

	if (!strcmp(req->path, "/healthz"))
		return bp_httpd__respond_text(h, req->id, 200, "ok\n");
	if (!strcmp(req->path, "/metrics")) {
		update_self(a);
		if (bp_metrics_write(&b, a->have_last ? a->last : NULL,
				     a->have_last ? &a->last_sum : NULL, a->top, a->devs, a->nr_devs,
				     &a->self)) {
			bp_buf_free(&b);
			return error(a, req->id, 500, "cannot write the metrics\n");
		}
		return respond_buf(a, req->id, 200, BP_PROM_CONTENT_TYPE, &b);
	}
	if (!strcmp(req->path, "/debug/pprof/profile")) {
		long secs = 30;
		int r = bp_httpd_query_get(req->query, "seconds", val, sizeof(val));
		struct capture *c;

		if (r && r != -ENOENT)
			return error(a, req->id, 400, "bad query\n");
		if (!r) {
			errno = 0;
			secs = strtol(val, &end, 10);
			if (errno || end == val || *end || secs < 1 || secs > MAX_SECONDS)
				return error(a, req->id, 400,
					     "seconds must be a whole number from 1 to 300\n");
		}
		if (a->nr_caps == MAX_CAPTURES)
			return error(a, req->id, 503, "too many profiles in progress\n");
		c = &a->caps[a->nr_caps];
		c->p = bp_profile__new_like(a->window, bp_now_ns());
		if (!c->p)
			return error(a, req->id, 503, "out of memory\n");
		/*
		 * N whole slices, the one in progress first: N seconds of data,
		 * answered at most N seconds from now
		 */
		c->id = req->id;
		c->slices_left = secs;
		a->nr_caps++;
		return BP_HTTPD_HELD;
	}
	if (!strcmp(req->path, "/report") || !strcmp(req->path, "/flamegraph")) {
		struct bp_flame_opts fo = { .format = BP_FLAME_HTML, .initial_view = BP_VIEW_WALL,
					    .title = "boundprof agent: last window" };
		bool json = req->path[1] == 'r';

		if (!a->have_last)
			return error(a, req->id, 503, "no window closed yet\n");
		if (json ? bp_export_json(a->last, &a->last_sum, true, &b) :
			   bp_export_flame(a->last, &a->last_sum, &fo, &b)) {
			bp_buf_free(&b);
			return error(a, req->id, 500, "cannot render\n");
		}
		return respond_buf(a, req->id, 200,
				   json ? "application/json" : "text/html; charset=utf-8", &b);
	}
	if (!strcmp(req->path, "/"))
		return bp_httpd__respond_text(h, req->id, 200,
					      "boundprof agent: /metrics /debug/pprof/profile?seconds=N "
					      "/report /flamegraph /healthz\n");
	return error(a, req->id, 404, "not found\n");
}

/* ----------------------------------------------------------------- main */

static int parse(int argc, char **argv, struct agent *a, struct bp_session_opts *so)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "dir", required_argument, NULL, 'D' },
		{ "keep", required_argument, NULL, 'k' },
		{ "keep-bytes", required_argument, NULL, 'K' },
		{ "listen", required_argument, NULL, 'l' },
		{ "top", required_argument, NULL, 't' },
		{ "freq", required_argument, NULL, 'F' },
		{ "no-offcpu", no_argument, NULL, 'N' },
		{ "no-bpf-stats", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":F:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			errno = 0;
			a->interval = strtod(optarg, &end);
			if (errno || *end || !isfinite(a->interval) || a->interval < 1 ||
			    a->interval > 86400) {
				cli_error("invalid --interval %s: give seconds from 1 to 86400", optarg);
				return -EINVAL;
			}
			break;
		case 'D':
			a->dir = optarg;
			break;
		case 'k':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 10000000) {
				cli_error("invalid --keep %s: give a number of windows, 1 or more", optarg);
				return -EINVAL;
			}
			a->keep = v;
			break;
		case 'K':
			if (parse_size(optarg, &a->keep_bytes)) {
				cli_error("invalid --keep-bytes %s: give a size such as 500M", optarg);
				return -EINVAL;
			}
			break;
		case 'l':
			a->listen = strcmp(optarg, "off") ? optarg : NULL;
			break;
		case 't':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 10000) {
				cli_error("invalid --top %s: give a number of processes from 1 to 10000",
					  optarg);
				return -EINVAL;
			}
			a->top = v;
			break;
		case 'F':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > bp_max_sample_rate()) {
				cli_error("invalid frequency -F %s: give a whole number of Hz from 1 to %d",
					  optarg, bp_max_sample_rate());
				return -EINVAL;
			}
			so->hz = v;
			break;
		case 'N':
			so->offcpu = false;
			break;
		case 'S':
			a->bpf_stats = false;
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			cli_bad_option("agent", c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		cli_error("agent takes no arguments: '%s' (see: boundprof agent --help)",
			  argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int add_fd(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int cmd_agent(int argc, char **argv)
{
	struct agent a = { .interval = 10, .dir = DEFAULT_DIR, .keep = 60, .top = 20,
			   .bpf_stats = true, .listen = DEFAULT_LISTEN };
	struct bp_session_opts so = { .hz = 99, .offcpu = true, .offcpu_ustacks = 2,
				      .no_preempt_stacks = true,
				      .drain_interval_s = 1.0 };
	struct epoll_event evs[8];
	struct sigaction sa = {};
	uint64_t next_slice;
	int ep = -1, err, ret = 0, i;

	/* a daemon's log is read later: say when it starts, stops and writes */
	cli_env.verbose = 1;
	if (parse(argc, argv, &a, &so))
		return EXIT_USAGE;
	err = mkdirs(a.dir);
	if (err) {
		cli_error("cannot write to --dir %s: %s", a.dir, strerror(-err));
		return EXIT_USAGE;
	}
	sweep_temps(a.dir);
	if (cli_check_environment())
		return EXIT_RUNTIME;
	if (a.listen) {
		a.http = bp_httpd__new(a.listen, handle, &a, NULL);
		if (!a.http) {
			if (errno == EINVAL)
				cli_error("bad --listen address '%s': want 127.0.0.1:PORT, "
					  "[::1]:PORT, :PORT (every interface) or off", a.listen);
			else
				cli_error("cannot listen on %s: %s", a.listen, strerror(errno));
			return errno == EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		}
	}
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	so.verbose_libbpf = cli_env.verbose >= 3;	/* -vv */
	if (bp_session__open(&a.s, &so) || bp_session__start(a.s)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	/* our own BPF run time for /metrics; costs two clock reads per program run */
	if (a.bpf_stats && (err = bp_loader__count_run_time(a.s->loader)))
		bp_warn("BPF run time will not be counted: %s", strerror(-err));
	a.self.map_bytes = bp_loader__map_bytes(a.s->loader);
	a.window = bp_profile__new_like(a.s->prof, a.s->prof->start_ns);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!a.window || ep < 0 || add_fd(ep, bp_session__events_fd(a.s)) ||
	    (a.http && add_fd(ep, bp_httpd__fd(a.http)))) {
		cli_error("cannot set up the event loop: %s", strerror(errno));
		ret = EXIT_RUNTIME;
		goto out;
	}
	a.window_end = a.s->prof->start_ns + (uint64_t)(a.interval * 1e9);
	next_slice = bp_now_ns() + 1000000000ULL;
	bp_info("agent: windows of %.0f s into %s, HTTP on %s", a.interval, a.dir,
		a.listen ? a.listen : "(off)");

	while (!agent_stop) {
		uint64_t now = bp_now_ns();
		int timeout = now >= next_slice ? 0 : (int)((next_slice - now) / 1000000) + 1;

		/* each wake-up costs; only a memory probe under way needs 100 ms */
		if (timeout > 100 && bp_session__wants_ticks(a.s))
			timeout = 100;
		if (epoll_wait(ep, evs, 8, timeout) < 0 && errno != EINTR) {
			cli_error("event loop failed: %s", strerror(errno));
			ret = EXIT_RUNTIME;
			break;
		}
		if (bp_session__tick(a.s)) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (a.http && bp_httpd__process(a.http)) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (agent_hup) {
			agent_hup = 0;
			err = mkdirs(a.dir);
			if (err)
				bp_warn("cannot re-create %s: %s", a.dir, strerror(-err));
		}
		if (bp_now_ns() >= next_slice) {
			if (slice(&a)) {
				ret = EXIT_RUNTIME;
				break;
			}
			next_slice += 1000000000ULL;
			if (next_slice < bp_now_ns())
				next_slice = bp_now_ns() + 1000000000ULL;
		}
	}
	/* the partial window is written, and captures get what they have */
	if (a.s && a.window) {
		struct bp_profile *sl;

		if (!bp_session__rotate(a.s, &sl) && sl) {
			bp_profile__merge(a.window, sl);
			for (i = 0; i < (int)a.nr_caps; i++)
				bp_profile__merge(a.caps[i].p, sl);
			bp_profile__free(sl);
		}
		if (!close_window(&a) && agent_stop)
			bp_info("agent: stopped by %s; last window: %s/%s.{pb.gz,json}",
				strsignal(agent_stop), a.dir, a.last_name);
		while (a.nr_caps)
			answer_capture(&a, &a.caps[0]);
		/* give the answers a moment to leave */
		for (i = 0; a.http && i < 20 && bp_httpd__conns(a.http); i++) {
			epoll_wait(ep, evs, 8, 50);
			bp_httpd__process(a.http);
		}
	}
out:
	if (ep >= 0)
		close(ep);
	while (a.nr_caps)
		bp_profile__free(a.caps[--a.nr_caps].p);
	if (a.have_last) {
		bp_summary_free(&a.last_sum);
		bp_profile__free(a.last);
	}
	bp_profile__free(a.window);
	bp_httpd__free(a.http);
	bp_session__free(a.s);
	free(a.devs);
	return ret;
}
