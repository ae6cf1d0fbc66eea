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

static void stem__utc_time_and_sequence(void **state)
{
	char s[96];

	/* 2026-11-29 20:46:47 UTC */
	assert_int_equal(bp_window_stem(s, sizeof(s), 1795985207, 1), 0);
	assert_string_equal(s, "boundprof-20261129T204647Z-00000001");
	assert_int_equal(bp_window_stem(s, sizeof(s), 0, 123456789), 0);
	assert_string_equal(s, "boundprof-19700101T000000Z-123456789");
	assert_int_equal(bp_window_stem(s, 10, 0, 1), -ENAMETOOLONG);
}

/* ---------------------------------------------------------------- retention */

static void window(uint64_t seq, size_t pb, size_t json)
{
	char stem[96], name[128];

	assert_int_equal(bp_window_stem(stem, sizeof(stem), 1795985207 + seq, seq), 0);
	snprintf(name, sizeof(name), "%s.pb.gz", stem);
	put(name, pb);
	snprintf(name, sizeof(name), "%s.json", stem);
	put(name, json);
}

static bool has_window(uint64_t seq)
{
	char stem[96], pb[128], js[128];
	bool a, b;

	bp_window_stem(stem, sizeof(stem), 1795985207 + seq, seq);
	snprintf(pb, sizeof(pb), "%s.pb.gz", stem);
	snprintf(js, sizeof(js), "%s.json", stem);
	a = exists(pb);
	b = exists(js);
	/* a window's two files stay or go together */
	assert_int_equal(a, b);
	return a;
}

static void retain__keep_n__newest_stay_others_untouched(void **state)
{
	uint64_t i;

	for (i = 1; i <= 6; i++)
		window(i, 100, 200);
	put("notes.txt", 10);
	put("boundprof-x.txt", 10);
	assert_int_equal(bp_retain(tmpdir, 3, 0), 3);
	for (i = 1; i <= 6; i++)
		assert_int_equal(has_window(i), i > 3);
	assert_true(exists("notes.txt"));
	assert_true(exists("boundprof-x.txt"));
	/* nothing more to do the second time */
	assert_int_equal(bp_retain(tmpdir, 3, 0), 0);
}

static void retain__keep_bytes__what_fits_and_never_empty(void **state)
{
	uint64_t i;

	for (i = 1; i <= 5; i++)
		window(i, 300, 700);	/* 1000 bytes a window */
	assert_int_equal(bp_retain(tmpdir, 100, 2500), 3);
	for (i = 1; i <= 5; i++)
		assert_int_equal(has_window(i), i >= 4);
	/* a budget below one window keeps the newest anyway */
	assert_int_equal(bp_retain(tmpdir, 100, 10), 1);
	assert_false(has_window(4));
	assert_true(has_window(5));
}

static void retain__missing_dir__error(void **state)
{
	assert_int_equal(bp_retain(path("nope"), 3, 0), -ENOENT);
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

static struct bp_daemon *daemon_new(void)
{
	struct bp_daemon_opts o;
	struct bp_daemon *d;

	bp_daemon_opts_default(&o);
	o.dir = path("win");
	o.listen = "127.0.0.1:0";
	o.interval_s = 2;
	o.keep = 3;
	assert_int_equal(bp_daemon__new(&d, &o), 0);
	assert_int_equal(bp_daemon__listen(d), 0);
	assert_true(bp_daemon__http_port(d) > 0);
	return d;
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
	/* the files of the window, by the name its end gives */
	assert_string_equal(bp_daemon__last_stem(d), "boundprof-20261129T204649Z-00000001");
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

static void quiet(enum bp_log_level level, const char *fmt, va_list ap)
{
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stem__utc_time_and_sequence),
		cmocka_unit_test_setup_teardown(retain__keep_n__newest_stay_others_untouched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(retain__keep_bytes__what_fits_and_never_empty, setup,
						teardown),
		cmocka_unit_test_setup_teardown(retain__missing_dir__error, setup, teardown),
		cmocka_unit_test_setup_teardown(routes__before_and_after_a_window, setup, teardown),
		cmocka_unit_test_setup_teardown(routes__bad_seconds__400_and_no_capture, setup,
						teardown),
		cmocka_unit_test_setup_teardown(capture__answered_after_its_slices, setup, teardown),
		cmocka_unit_test_setup_teardown(capture__ninth__503_and_client_gone__dropped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(close_window__retention_applies, setup, teardown),
	};

	bp_log_set(quiet);
	return cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
}
