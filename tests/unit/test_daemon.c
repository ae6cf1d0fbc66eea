// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's daemon without BPF: window names, retention in a real
 * directory, slices folded into windows and captures, and the HTTP routes,
 * with profiles made by hand and a real loopback client.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cmocka.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "model/profile.h"
#include "serve/daemon.h"
#include "util/buf.h"
#include "util/log.h"

#define PERIOD		10101010ULL	/* cpu-clock at 99 Hz, ns */
#define SEC		1000000000ULL

static char tmpdir[256];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bp-test-daemon.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const char *path(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void put(const char *name, size_t size)
{
	FILE *f = fopen(path(name), "w");
	size_t i;

	assert_non_null(f);
	for (i = 0; i < size; i++)
		fputc('x', f);
	assert_int_equal(fclose(f), 0);
}

static bool exists(const char *name)
{
	struct stat st;

	return !lstat(path(name), &st);
}

static int count_files(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ----------------------------------------------------------- window names */

#define RUN	"0a1b2c3d"
#define OLDRUN	"99999999"

static void stem__utc_time_run_and_sequence(void **state)
{
	struct bp_window_name w;
	char s[96], name[128];

	/* 2026-11-29 20:46:47 UTC */
	assert_int_equal(bp_window_stem(s, sizeof(s), 1795985207, RUN, 1), 0);
	assert_string_equal(s, "boundprof-20261129T204647Z-0a1b2c3d-00000001");
	assert_int_equal(bp_window_stem(s, sizeof(s), 0, RUN, 123456789), 0);
	assert_string_equal(s, "boundprof-19700101T000000Z-0a1b2c3d-123456789");
	assert_int_equal(bp_window_stem(s, 10, 0, RUN, 1), -ENAMETOOLONG);
	assert_int_equal(bp_window_stem(s, sizeof(s), 0, "0A1B2C3D", 1), -EINVAL);
	assert_int_equal(bp_window_stem(s, sizeof(s), 0, "0a1b2c3", 1), -EINVAL);

	/* and back */
	snprintf(name, sizeof(name), "%s.pb.gz", s);
	assert_int_equal(bp_window_stem(s, sizeof(s), 1795985207, RUN, 42), 0);
	snprintf(name, sizeof(name), "%s.json", s);
	assert_int_equal(bp_window_name_parse(name, &w), 0);
	assert_string_equal(w.when, "20261129T204647Z");
	assert_string_equal(w.run, RUN);
	assert_int_equal(w.seq, 42);
	assert_true(w.json);
	assert_int_equal(w.stem_len, strlen(s));
}

static void name_parse__only_exact_names(void **state)
{
	static const char *const bad[] = {
		"boundprof-99999999T999999Z-99999999.json",		/* no run id */
		"boundprof-20261129T204647Z-0a1b2c3d-00000001.json.bak",
		"boundprof-20261129T204647Z-0a1b2c3d-00000001.txt",
		"boundprof-20261129T204647Z-0a1b2c3d-0000001.json",	/* 7 digits */
		"boundprof-20261129T204647Z-0A1B2C3D-00000001.json",
		"boundprof-20261129T204647-0a1b2c3d-00000001.json",
		"xboundprof-20261129T204647Z-0a1b2c3d-00000001.json",
		"boundprof-2026112xT204647Z-0a1b2c3d-00000001.json",
		"boundprof-20261129T204647Z-0a1b2c3d-00000001",
		"boundprof-20261129T204647Z-0a1b2c3d--0000001.json",
		".boundprof-20261129T204647Z-0a1b2c3d-00000001.json",
		"boundprof-20261129T204647Z-0a1b2c3d-00000001a.json",
	};
	struct bp_window_name w;
	size_t i;

	assert_int_equal(bp_window_name_parse("boundprof-99999999T999999Z-99999999-99999999.pb.gz",
					      &w), 0);
	assert_false(w.json);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!bp_window_name_parse(bad[i], &w))
			fail_msg("%s taken for a window", bad[i]);
	}
}

/* ---------------------------------------------------------------- retention */

static void window_of(const char *run, uint64_t seq, size_t pb, size_t json)
{
	char stem[96], name[128];

	assert_int_equal(bp_window_stem(stem, sizeof(stem), 1795985207 + seq, run, seq), 0);
	snprintf(name, sizeof(name), "%s.pb.gz", stem);
	put(name, pb);
	snprintf(name, sizeof(name), "%s.json", stem);
	put(name, json);
}

static void window(uint64_t seq, size_t pb, size_t json)
{
	window_of(RUN, seq, pb, json);
}

static bool has_window_of(const char *run, uint64_t seq)
{
	char stem[96], pb[128], js[128];
	bool a, b;

	bp_window_stem(stem, sizeof(stem), 1795985207 + seq, run, seq);
	snprintf(pb, sizeof(pb), "%s.pb.gz", stem);
	snprintf(js, sizeof(js), "%s.json", stem);
	a = exists(pb);
	b = exists(js);
	/* a window's two files stay or go together */
	assert_int_equal(a, b);
	return a;
}

static bool has_window(uint64_t seq)
{
	return has_window_of(RUN, seq);
}

static int dirfd_of(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static int retain(uint32_t keep, uint64_t keep_bytes)
{
	int fd = dirfd_of(tmpdir), n = bp_retain(fd, RUN, keep, keep_bytes);

	close(fd);
	return n;
}

static void retain__keep_n__newest_stay_others_untouched(void **state)
{
	uint64_t i;

	for (i = 1; i <= 6; i++)
		window(i, 100, 200);
	put("notes.txt", 10);
	put("boundprof-x.txt", 10);
	assert_int_equal(retain(3, 0), 3);
	for (i = 1; i <= 6; i++)
		assert_int_equal(has_window(i), i > 3);
	assert_true(exists("notes.txt"));
	assert_true(exists("boundprof-x.txt"));
	/* nothing more to do the second time */
	assert_int_equal(retain(3, 0), 0);
}

static void retain__keep_bytes__what_fits_and_never_empty(void **state)
{
	uint64_t i;

	for (i = 1; i <= 5; i++)
		window(i, 300, 700);	/* 1000 bytes a window */
	assert_int_equal(retain(100, 2500), 3);
	for (i = 1; i <= 5; i++)
		assert_int_equal(has_window(i), i >= 4);
	/* a budget below one window keeps the newest anyway */
	assert_int_equal(retain(100, 10), 1);
	assert_false(has_window(4));
	assert_true(has_window(5));
}

static void retain__bad_fd__error(void **state)
{
	assert_int_equal(bp_retain(-1, RUN, 3, 0), -EBADF);
}

/*
 * Attack: another user plants a window-like file that sorts newest in a
 * directory they may write; links and other names come along. None of them
 * is counted or touched, and the real windows stay.
 */
static void retain__planted_files__ignored_and_left(void **state)
{
	char stem[96], name[128], target[512];
	uint64_t i;

	assert_int_equal(chmod(tmpdir, 01777), 0);
	for (i = 1; i <= 3; i++)
		window(i, 100, 100);
	/* the exact name of a newest window, but another user's */
	bp_window_stem(stem, sizeof(stem), 4102444799LL, "ffffffff", 99999999);
	snprintf(name, sizeof(name), "%s.json", stem);
	put(name, 10);
	assert_int_equal(chown(path(name), 65534, 65534), 0);
	/* the old form of the attack */
	put("boundprof-99999999T999999Z-99999999.json", 10);
	/* a link to a file elsewhere, under the name of a window of this run */
	snprintf(target, sizeof(target), "%s", path("precious"));
	put("precious", 5);
	bp_window_stem(stem, sizeof(stem), 1795985207 + 9, RUN, 9);
	snprintf(name, sizeof(name), "%s.pb.gz", stem);
	assert_int_equal(symlink(target, path(name)), 0);
	/* a second name for a file: not one this agent writes */
	bp_window_stem(stem, sizeof(stem), 1795985207 + 8, RUN, 8);
	snprintf(name, sizeof(name), "%s.json", stem);
	assert_int_equal(link(target, path(name)), 0);
	/* a directory under a window's name */
	bp_window_stem(stem, sizeof(stem), 1795985207 + 7, RUN, 7);
	snprintf(name, sizeof(name), "%s.json", stem);
	assert_int_equal(mkdir(path(name), 0700), 0);

	assert_int_equal(retain(2, 0), 1);
	assert_false(has_window(1));
	assert_true(has_window(2));
	assert_true(has_window(3));
	assert_true(exists("precious"));
	assert_true(exists("boundprof-99999999T999999Z-99999999.json"));
	/* 3 windows' worth of ours kept or gone, everything planted still there */
	assert_int_equal(count_files(tmpdir), 4 + 1 + 1 + 1 + 1 + 1 + 1);
}

/* earlier runs' windows (ours, exact names) are older than this run's and go first */
static void retain__earlier_runs__oldest_first(void **state)
{
	uint64_t i;

	/* an earlier run with later sequence numbers and later times */
	for (i = 1; i <= 3; i++)
		window_of(OLDRUN, 100 + i, 100, 100);
	for (i = 1; i <= 2; i++)
		window(i, 100, 100);
	assert_int_equal(retain(3, 0), 2);
	assert_true(has_window(1));
	assert_true(has_window(2));
	assert_false(has_window_of(OLDRUN, 101));
	assert_false(has_window_of(OLDRUN, 102));
	assert_true(has_window_of(OLDRUN, 103));
}

/* ------------------------------------------------------- slices and HTTP */

static uint32_t frame(struct bp_profile *p, const char *name)
{
	struct bp_frame f = { .name = name, .module = "spin", .offset = 0x1000 };
	int64_t id = bp_profile__frame(p, &f);

	assert_true(id >= 0);
	return id;
}

/* second i of a recording: pid 4242 "spin", 50 samples in spin_hot */
static struct bp_profile *slice_at(int i)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t fr[2];
	struct bp_proc *pr;
	int64_t st;

	assert_non_null(p);
	p->start_ns = 100 * SEC + i * SEC;
	p->end_ns = p->start_ns + SEC;
	p->start_unix_ns = 1795985207LL * SEC + i * SEC;
	p->hz = 99;
	p->ncpus = 2;
	p->system_wide = true;
	p->event = "cpu-clock";	/* as the session sets it: static */
	p->stats.v[BP_STAT_SAMPLES] = 198;
	pr = bp_profile__proc(p, 4242, true);
	assert_non_null(pr);
	strcpy(pr->comm, "spin");
	fr[0] = frame(p, "main");
	fr[1] = frame(p, "spin_hot");
	st = bp_profile__stack(p, fr, 2);
	assert_true(st >= 0);
	assert_int_equal(bp_profile__add(p, 4242, 4242, BP_KIND_ONCPU, st, 50, 50 * PERIOD), 0);
	assert_non_null(bp_proc__thread(pr, 4242, "spin"));
	return p;
}

static void feed(struct bp_daemon *d, int i)
{
	struct bp_profile *p = slice_at(i);

	assert_int_equal(bp_daemon__add_slice(d, p), 0);
	bp_profile__free(p);
}

struct client {
	int fd;
	struct bp_buf resp;
	bool done;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void client_send(struct client *c, struct bp_daemon *d, const char *path_q)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(bp_daemon__http_port(d)) };
	char req[512];
	int n;

	memset(c, 0, sizeof(*c));
	bp_buf_init(&c->resp);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(c->fd >= 0);
	/* loopback connects complete in the kernel, before any accept */
	assert_int_equal(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcntl(c->fd, F_SETFL, O_NONBLOCK), 0);
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path_q);
	assert_int_equal(send(c->fd, req, n, 0), n);
}

/* serve and read for up to ms; true once the server closed the connection */
static bool client_pump(struct client *c, struct bp_daemon *d, int ms)
{
	uint64_t end = now_ms() + ms;
	char tmp[16384];
	ssize_t r;

	do {
		struct pollfd pfd[2] = {
			{ .fd = bp_daemon__http_fd(d), .events = POLLIN },
			{ .fd = c->fd, .events = POLLIN },
		};

		poll(pfd, 2, 5);
		assert_int_equal(bp_daemon__process_http(d), 0);
		while ((r = recv(c->fd, tmp, sizeof(tmp), 0)) > 0)
			bp_buf_append(&c->resp, tmp, r);
		if (!r)
			c->done = true;
	} while (!c->done && now_ms() < end);
	return c->done;
}

static int client_status(const struct client *c)
{
	assert_true(c->resp.len > 12);
	return atoi(c->resp.data + 9);
}

static const char *client_body(const struct client *c, size_t *len)
{
	const char *b = memmem(c->resp.data, c->resp.len, "\r\n\r\n", 4);

	assert_non_null(b);
	if (len)
		*len = c->resp.len - (b + 4 - c->resp.data);
	return b + 4;
}

static void client_close(struct client *c)
{
	close(c->fd);
	bp_buf_free(&c->resp);
}

static int get(struct bp_daemon *d, const char *path_q, char **body)
{
	struct client c;
	int status;

	client_send(&c, d, path_q);
	assert_true(client_pump(&c, d, 5000));
	status = client_status(&c);
	if (body) {
		size_t len;
		const char *b = client_body(&c, &len);

		*body = strndup(b, len);
	}
	client_close(&c);
	return status;
}

/* a capture's margin in the test below: the default's ten seconds would be waited out */
#define MARGIN_MS	500

static struct bp_daemon *daemon_new_margin(uint32_t margin_ms)
{
	struct bp_daemon_opts o;
	struct bp_daemon *d;

	static char dir[512];

	bp_daemon_opts_default(&o);
	assert_int_equal(o.capture_margin_ms, BP_DAEMON_CAPTURE_MARGIN_MS);
	if (margin_ms)
		o.capture_margin_ms = margin_ms;
	/* the daemon keeps the pointer: not one of path()'s rotating buffers */
	snprintf(dir, sizeof(dir), "%s", path("win"));
	o.dir = dir;
	o.listen = "127.0.0.1:0";
	o.interval_s = 2;
	o.keep = 3;
	assert_int_equal(bp_daemon__new(&d, &o), 0);
	assert_int_equal(bp_daemon__listen(d), 0);
	assert_true(bp_daemon__http_port(d) > 0);
	return d;
}

static struct bp_daemon *daemon_new(void)
{
	return daemon_new_margin(0);
}

static void routes__before_and_after_a_window(void **state)
{
	struct bp_daemon *d = daemon_new();
	char *body, name[256];

	assert_int_equal(get(d, "/healthz", &body), 200);
	assert_string_equal(body, "ok\n");
	free(body);
	assert_int_equal(get(d, "/report", NULL), 503);
	assert_int_equal(get(d, "/flamegraph", NULL), 503);
	assert_int_equal(get(d, "/nope", NULL), 404);
	assert_int_equal(get(d, "/", NULL), 200);
	/* before a window, the agent's own families only */
	assert_int_equal(get(d, "/metrics", &body), 200);
	assert_non_null(strstr(body, "\nboundprof_agent_windows_total 0\n"));
	assert_null(strstr(body, "boundprof_process_cpu_seconds{"));
	free(body);

	feed(d, 0);
	feed(d, 1);
	assert_int_equal(bp_daemon__close_window(d), 0);
	assert_int_equal(bp_daemon__windows(d), 1);
	/* the files of the window, by the name its end and the run give */
	snprintf(name, sizeof(name), "boundprof-20261129T204649Z-%s-00000001",
		 bp_daemon__run_id(d));
	assert_string_equal(bp_daemon__last_stem(d), name);
	snprintf(name, sizeof(name), "win/%s.pb.gz", bp_daemon__last_stem(d));
	assert_true(exists(name));
	snprintf(name, sizeof(name), "win/%s.json", bp_daemon__last_stem(d));
	assert_true(exists(name));

	assert_int_equal(get(d, "/report", &body), 200);
	assert_non_null(strstr(body, "\"comm\": \"spin\""));
	free(body);
	assert_int_equal(get(d, "/flamegraph", &body), 200);
	assert_non_null(strstr(body, "<html"));
	free(body);
	assert_int_equal(get(d, "/metrics", &body), 200);
	assert_non_null(strstr(body, "\nboundprof_agent_windows_total 1\n"));
	/* two one-second slices, 100 samples of 10.1 ms each */
	assert_non_null(strstr(body, "\nboundprof_window_seconds 2\n"));
	assert_non_null(strstr(body, "\nboundprof_process_cpu_seconds{pid=\"4242\",comm=\"spin\"} "
				     "1.010101\n"));
	assert_non_null(strstr(body, "\nboundprof_agent_samples_total 396\n"));
	free(body);
	bp_daemon__free(d);
}

static void routes__bad_seconds__400_and_no_capture(void **state)
{
	static const char *const bad[] = { "0", "301", "-5", "1e9", "abc", "", "3.5" };
	struct bp_daemon *d = daemon_new();
	char q[128];
	size_t i;

	feed(d, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(q, sizeof(q), "/debug/pprof/profile?seconds=%s", bad[i]);
		assert_int_equal(get(d, q, NULL), 400);
	}
	assert_int_equal(get(d, "/debug/pprof/profile?seconds=%zz", NULL), 400);
	assert_int_equal(bp_daemon__captures(d), 0);
	bp_daemon__free(d);
}

static void capture__answered_after_its_slices(void **state)
{
	struct bp_daemon *d = daemon_new();
	struct client c;
	const char *body;
	size_t len;

	feed(d, 0);
	client_send(&c, d, "/debug/pprof/profile?seconds=2");
	assert_false(client_pump(&c, d, 100));
	assert_int_equal(bp_daemon__captures(d), 1);
	/* held: the first slice is not enough */
	feed(d, 1);
	assert_false(client_pump(&c, d, 50));
	assert_int_equal(c.resp.len, 0);
	feed(d, 2);
	assert_int_equal(bp_daemon__captures(d), 0);
	assert_true(client_pump(&c, d, 5000));
	assert_int_equal(client_status(&c), 200);
	body = client_body(&c, &len);
	/* a gzip-compressed profile */
	assert_true(len > 20);
	assert_int_equal((unsigned char)body[0], 0x1f);
	assert_int_equal((unsigned char)body[1], 0x8b);
	assert_non_null(memmem(c.resp.data, c.resp.len, "filename=\"profile.pb.gz\"", 24));
	client_close(&c);
	bp_daemon__free(d);
}

static void capture__ninth__503_and_client_gone__dropped(void **state)
{
	struct bp_daemon *d = daemon_new();
	struct client c[BP_DAEMON_MAX_CAPTURES + 1];
	int i;

	feed(d, 0);
	for (i = 0; i < BP_DAEMON_MAX_CAPTURES; i++) {
		client_send(&c[i], d, "/debug/pprof/profile?seconds=5");
		assert_false(client_pump(&c[i], d, 50));
	}
	assert_int_equal(bp_daemon__captures(d), BP_DAEMON_MAX_CAPTURES);
	client_send(&c[i], d, "/debug/pprof/profile?seconds=5");
	assert_true(client_pump(&c[i], d, 5000));
	assert_int_equal(client_status(&c[i]), 503);
	client_close(&c[i]);

	/* three clients hang up: their captures end at the next slice */
	for (i = 0; i < 3; i++)
		client_close(&c[i]);
	assert_false(client_pump(&c[3], d, 100));
	feed(d, 1);
	assert_int_equal(bp_daemon__captures(d), BP_DAEMON_MAX_CAPTURES - 3);
	for (i = 3; i < BP_DAEMON_MAX_CAPTURES; i++)
		client_close(&c[i]);
	/* freed with their held connections */
	bp_daemon__free(d);
}

/* slices stop coming (a stuck loop, a session error): the client is not held for ever */
static void capture__past_its_seconds_and_margin__503(void **state)
{
	struct bp_daemon *d = daemon_new_margin(MARGIN_MS);
	uint64_t t0 = now_ms();
	struct client c;
	char *body;

	feed(d, 0);
	client_send(&c, d, "/debug/pprof/profile?seconds=1");
	assert_true(client_pump(&c, d, 1000 + MARGIN_MS + 5000));
	assert_true(now_ms() - t0 >= 1000 + MARGIN_MS - 50);
	assert_int_equal(client_status(&c), 503);
	client_close(&c);
	/* the capture is dropped at the next slice, and the deadline counted */
	feed(d, 1);
	assert_int_equal(bp_daemon__captures(d), 0);
	assert_int_equal(get(d, "/metrics", &body), 200);
	assert_non_null(strstr(body, "\nboundprof_agent_http_timeouts_total{phase=\"held\"} 1\n"));
	free(body);
	bp_daemon__free(d);
}

static void close_window__retention_applies(void **state)
{
	struct bp_daemon *d = daemon_new();
	int i;

	for (i = 0; i < 5; i++) {
		feed(d, i);
		assert_int_equal(bp_daemon__close_window(d), 0);
	}
	/* --keep 3: three windows, two files each */
	assert_int_equal(count_files(path("win")), 6);
	assert_int_equal(bp_daemon__windows(d), 5);
	bp_daemon__free(d);
}

static char logged[4096];

static void capture_log(enum bp_log_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(logged);

	if (n < sizeof(logged) - 2) {
		vsnprintf(logged + n, sizeof(logged) - n - 1, fmt, ap);
		strcat(logged, "\n");
	}
}

static mode_t mode_of(const char *p)
{
	struct stat st;

	assert_int_equal(lstat(p, &st), 0);
	return st.st_mode & 07777;
}

/* outputs 0600, the directory 0700, with a umask that would give everyone everything */
static void modes__exact_whatever_the_umask(void **state)
{
	mode_t old = umask(0);
	struct bp_daemon *d = daemon_new();
	char name[256];

	feed(d, 0);
	assert_int_equal(bp_daemon__close_window(d), 0);
	umask(old);
	assert_int_equal(mode_of(path("win")), 0700);
	snprintf(name, sizeof(name), "win/%s.pb.gz", bp_daemon__last_stem(d));
	assert_int_equal(mode_of(path(name)), 0600);
	snprintf(name, sizeof(name), "win/%s.json", bp_daemon__last_stem(d));
	assert_int_equal(mode_of(path(name)), 0600);
	bp_daemon__free(d);
}

/* an existing directory others may read is used, with one warning saying so */
static void open_dir__shared_directory__warned(void **state)
{
	struct bp_daemon *d;

	assert_int_equal(mkdir(path("win"), 0755), 0);
	assert_int_equal(chmod(path("win"), 0755), 0);
	logged[0] = '\0';
	d = daemon_new();
	assert_non_null(strstr(logged, "is open to others (mode 0755): chmod 700 it"));
	/* not tightened behind the owner's back */
	assert_int_equal(mode_of(path("win")), 0755);
	bp_daemon__free(d);
}

static void check__dir_and_token_file__refused_before_anything_is_made(void **state)
{
	char dir[512], tok[512];
	struct bp_daemon_opts o;
	struct bp_daemon *d = NULL;

	bp_daemon_opts_default(&o);
	o.listen = NULL;
	put("file", 3);
	o.dir = path("file");
	assert_int_equal(bp_daemon_check(&o), -ENOTDIR);
	o.dir = path("file/sub");
	assert_int_equal(bp_daemon_check(&o), -ENOTDIR);
	assert_int_equal(bp_daemon__new(&d, &o), -ENOTDIR);
	assert_null(d);
	/* path() reuses its buffers: the options keep copies */
	snprintf(dir, sizeof(dir), "%s", path("a/b/c"));
	o.dir = dir;
	assert_int_equal(bp_daemon_check(&o), 0);
	assert_false(exists("a"));

	snprintf(tok, sizeof(tok), "%s", path("token"));
	o.token_file = tok;
	put("token", 20);
	assert_int_equal(chmod(path("token"), 0640), 0);
	logged[0] = '\0';
	assert_int_equal(bp_daemon_check(&o), -EPERM);
	assert_non_null(strstr(logged, "group or other may access it"));
	assert_int_equal(chmod(path("token"), 0600), 0);
	assert_int_equal(chown(path("token"), 65534, 65534), 0);
	assert_int_equal(bp_daemon_check(&o), -EPERM);
	assert_int_equal(unlink(path("token")), 0);
	assert_int_equal(symlink(path("file"), path("token")), 0);
	assert_int_equal(bp_daemon_check(&o), -EINVAL);
	assert_int_equal(unlink(path("token")), 0);
	assert_int_equal(mkfifo(path("token"), 0600), 0);
	assert_int_equal(bp_daemon_check(&o), -EINVAL);
	assert_int_equal(unlink(path("token")), 0);
	put("token", 5);
	assert_int_equal(chmod(path("token"), 0600), 0);
	assert_int_equal(bp_daemon_check(&o), -EINVAL);
	/* nothing was created by any of it */
	assert_false(exists("a"));
}

static int get_auth(struct bp_daemon *d, const char *path_q, const char *auth, char **body)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(bp_daemon__http_port(d)) };
	struct client c;
	char req[512];
	int n, status;

	memset(&c, 0, sizeof(c));
	bp_buf_init(&c.resp);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(c.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcntl(c.fd, F_SETFL, O_NONBLOCK), 0);
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n%s%s%s\r\n", path_q,
		     auth ? "Authorization: " : "", auth ? auth : "", auth ? "\r\n" : "");
	assert_int_equal(send(c.fd, req, n, 0), n);
	assert_true(client_pump(&c, d, 5000));
	status = client_status(&c);
	if (status == 401)
		assert_non_null(memmem(c.resp.data, c.resp.len,
				       "\r\nWWW-Authenticate: Bearer realm=\"boundprof\"\r\n", 45));
	if (body) {
		size_t len;
		const char *b = client_body(&c, &len);

		*body = strndup(b, len);
	}
	client_close(&c);
	return status;
}

static void token__every_endpoint_but_healthz(void **state)
{
	static const char tok[] = "s3cr3t-t0ken-0123456789";
	char dir[512], tokfile[512];
	struct bp_daemon_opts o;
	struct bp_daemon *d;
	char *body;
	FILE *f;

	f = fopen(path("token"), "w");
	assert_non_null(f);
	fprintf(f, "%s\n", tok);
	fclose(f);
	assert_int_equal(chmod(path("token"), 0600), 0);
	bp_daemon_opts_default(&o);
	snprintf(dir, sizeof(dir), "%s", path("win"));
	snprintf(tokfile, sizeof(tokfile), "%s", path("token"));
	o.dir = dir;
	o.listen = "127.0.0.1:0";
	o.token_file = tokfile;
	assert_int_equal(bp_daemon__new(&d, &o), 0);
	assert_int_equal(bp_daemon__listen(d), 0);
	feed(d, 0);
	assert_int_equal(bp_daemon__close_window(d), 0);

	assert_int_equal(get_auth(d, "/healthz", NULL, NULL), 200);
	assert_int_equal(get_auth(d, "/metrics", NULL, NULL), 401);
	assert_int_equal(get_auth(d, "/report", NULL, NULL), 401);
	assert_int_equal(get_auth(d, "/debug/pprof/profile?seconds=1", NULL, NULL), 401);
	assert_int_equal(get_auth(d, "/", NULL, NULL), 401);
	assert_int_equal(get_auth(d, "/metrics", "Bearer s3cr3t-t0ken-012345678", NULL), 401);
	assert_int_equal(get_auth(d, "/metrics", "Bearer s3cr3t-t0ken-01234567890", NULL), 401);
	assert_int_equal(get_auth(d, "/metrics", "Basic s3cr3t-t0ken-0123456789", NULL), 401);
	assert_int_equal(get_auth(d, "/metrics", "Bearer s3cr3t-t0ken-0123456789", NULL), 200);
	assert_int_equal(get_auth(d, "/report", "bearer s3cr3t-t0ken-0123456789", NULL), 200);
	assert_int_equal(bp_daemon__captures(d), 0);
	/* the refusals are counted */
	assert_int_equal(get_auth(d, "/metrics", "Bearer s3cr3t-t0ken-0123456789", &body), 200);
	assert_non_null(strstr(body, "\nboundprof_agent_http_rejected_total{reason=\"unauthorized\"} 7\n"));
	free(body);
	bp_daemon__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stem__utc_time_run_and_sequence),
		cmocka_unit_test(name_parse__only_exact_names),
		cmocka_unit_test_setup_teardown(retain__keep_n__newest_stay_others_untouched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(retain__keep_bytes__what_fits_and_never_empty, setup,
						teardown),
		cmocka_unit_test_setup_teardown(retain__bad_fd__error, setup, teardown),
		cmocka_unit_test_setup_teardown(retain__planted_files__ignored_and_left, setup,
						teardown),
		cmocka_unit_test_setup_teardown(retain__earlier_runs__oldest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(routes__before_and_after_a_window, setup, teardown),
		cmocka_unit_test_setup_teardown(routes__bad_seconds__400_and_no_capture, setup,
						teardown),
		cmocka_unit_test_setup_teardown(capture__answered_after_its_slices, setup, teardown),
		cmocka_unit_test_setup_teardown(capture__ninth__503_and_client_gone__dropped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(close_window__retention_applies, setup, teardown),
		cmocka_unit_test_setup_teardown(capture__past_its_seconds_and_margin__503, setup,
						teardown),
		cmocka_unit_test_setup_teardown(modes__exact_whatever_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(open_dir__shared_directory__warned, setup, teardown),
		cmocka_unit_test_setup_teardown(
			check__dir_and_token_file__refused_before_anything_is_made, setup, teardown),
		cmocka_unit_test_setup_teardown(token__every_endpoint_but_healthz, setup, teardown),
	};

	bp_log_set(capture_log);
	return cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
}
