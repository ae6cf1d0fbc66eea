// SPDX-License-Identifier: GPL-2.0
/*
 * Network waits on real programs (root, real BPF): clients of a local
 * server that holds every request a known time (tests/fixtures/netserve.c).
 * The oracles are the fixtures' own: the server's delay and the requests
 * made give the least the clients waited, the clients measure the most
 * (their time in recv or epoll_wait), and the bytes on the wire are known
 * exactly: the payload received, and the payload sent plus at most the two
 * sequence numbers of a connection's SYN and FIN, which the kernel's
 * bytes_acked counts (docs/offcpu.md). Each case prints its figures and
 * verdict, which the closing notes quote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

#define DELAY_MS	20
#define BODY		1000
#define REQUESTS	100

/* what netserve sends before each body, with and without keep-alive */
static const char hdr_close[] = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n"
				"Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n";
static const char hdr_keep[] = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n"
			       "Content-Type: application/octet-stream\r\n\r\n";
/* what netclient sends */
static const char req_close[] = "GET /item HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
static const char req_keep[] = "GET /item HTTP/1.1\r\nHost: x\r\n\r\n";

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

/* start netserve; its port */
static int serve(int delay_ms, int lifetime_s)
{
	char d[16], life[16], line[64];
	int fd, port = 0;
	pid_t pid;

	snprintf(d, sizeof(d), "%d", delay_ms);
	snprintf(life, sizeof(life), "%d", lifetime_s);
	pid = h_spawn(ARGV((char *)h_fixture("netserve"), d, "1000", life), &fd);
	assert_true(pid > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 10), 0);
	assert_int_equal(sscanf(line, "port %d", &port), 1);
	return port;
}

/* record cmd into name; the report, and the command's "waited S" figure */
static struct bp_json *record(const char *name, char *const cmd[], double *waited)
{
	char *argv[40] = { (char *)h_bin(), "record", "-o", (char *)h_path(name), "--" };
	const char *w;
	struct run r;
	int i, n = 5;

	for (i = 0; cmd[i] && n < 39; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	assert_int_equal(h_run(argv, 120, &r), 0);
	if (r.exit_code)
		fprintf(stderr, "--- exit %d\n%s\n%s\n", r.exit_code, r.out, r.err);
	assert_int_equal(r.exit_code, 0);
	w = strstr(r.out, "waited ");
	*waited = w ? atof(w + 7) : -1;
	h_run_free(&r);
	return h_json_file(h_path(name));
}

/*
 * A client of the delaying server: every round trip waits at least the
 * delay, and boundprof's network wait is at least that and at most what
 * the client measured itself.
 */
static const struct bp_json *check_client(const struct bp_json *rep, const char *comm,
					  double least, double waited, int port)
{
	const struct bp_json *p = h_find_proc(rep, comm), *peer;
	double net;
	char want[32];

	assert_non_null(p);
	h_show_verdict(comm, p);
	net = bp_json_num(bp_json_path(p, "off_cpu_s.net"));
	fprintf(stderr, "  network wait %.3f s; delay x requests %.3f s (%+.1f%%); the client "
		"measured %.3f s\n", net, least, (net / least - 1) * 100, waited);
	assert_true(net >= 0.95 * least);
	if (waited > 0)
		assert_true(net <= 1.05 * waited);
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.class")), "io-bound");
	assert_true(h_evidence_has(p, "waiting on the network"));
	if (port) {
		assert_true(h_evidence_has(p, "p50"));
		peer = bp_json_at(bp_json_path(p, "network.peers"), 0);
		snprintf(want, sizeof(want), "127.0.0.1:%d", port);
		assert_string_equal(bp_json_str(bp_json_get(peer, "peer")), want);
		assert_string_equal(bp_json_str(bp_json_get(peer, "side")), "client");
		assert_true(h_evidence_has(p, want));
	}
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.amdahl.wait_on")), "network");
	return p;
}

/* payload sent, and the SYN and FIN of each connection at most */
static void check_sent(const struct bp_json *p, uint64_t payload, uint64_t conns)
{
	uint64_t tx = bp_json_num(bp_json_path(p, "network.tx_bytes"));

	fprintf(stderr, "  sent %llu bytes for %llu of payload over %llu connections\n",
		(unsigned long long)tx, (unsigned long long)payload, (unsigned long long)conns);
	assert_true(tx >= payload && tx <= payload + 2 * conns);
}

/* the one who ended its waits: the server, from the network receive softirq */
static void check_woken_by_server(const struct bp_json *p)
{
	const struct bp_json *w = bp_json_at(bp_json_get(p, "woken_by"), 0);

	assert_non_null(w);
	fprintf(stderr, "  woken by %s (%s): %.3f s\n", bp_json_str(bp_json_get(w, "comm")),
		bp_json_str(bp_json_get(w, "context")), bp_json_num(bp_json_get(w, "seconds")));
	assert_string_equal(bp_json_str(bp_json_get(w, "comm")), "netserve");
	assert_string_equal(bp_json_str(bp_json_get(w, "class")), "net");
}

static void client__one_request_at_a_time__waits_delay_times_requests(void **state)
{
	int port = serve(DELAY_MS, 60);
	char ps[16], n[16];
	struct bp_json *rep;
	const struct bp_json *p;
	double waited, rt;

	snprintf(ps, sizeof(ps), "%d", port);
	snprintf(n, sizeof(n), "%d", REQUESTS);
	rep = record("client.json", ARGV((char *)h_fixture("netclient"), ps, n), &waited);
	assert_non_null(rep);
	p = check_client(rep, "netclient", REQUESTS * DELAY_MS / 1e3, waited, port);
	rt = bp_json_num(bp_json_path(p, "network.round_trips"));
	fprintf(stderr, "  %.0f round trips for %d requests; p50 %.2f ms\n", rt, REQUESTS,
		bp_json_num(bp_json_path(p, "network.p50_ms")));
	assert_true(rt >= REQUESTS && rt <= REQUESTS * 1.1);
	/* the p50 of waits that each last the delay, within the histogram's 1/8 octave */
	assert_true(bp_json_num(bp_json_path(p, "network.p50_ms")) >= DELAY_MS * 0.875);
	/* every byte on the wire, exactly */
	assert_int_equal((uint64_t)bp_json_num(bp_json_path(p, "network.rx_bytes")),
			 REQUESTS * (BODY + strlen(hdr_close)));
	check_sent(p, REQUESTS * strlen(req_close), REQUESTS);
	assert_true(h_evidence_has(p, "100 round trips"));
	check_woken_by_server(p);
	bp_json_free(rep);
}

static void client__keepalive__one_peer_every_byte(void **state)
{
	int port = serve(DELAY_MS, 60);
	char ps[16];
	struct bp_json *rep;
	const struct bp_json *p;
	double waited;

	snprintf(ps, sizeof(ps), "%d", port);
	rep = record("keep.json", ARGV((char *)h_fixture("netclient"), ps, "50", "keepalive"),
		     &waited);
	assert_non_null(rep);
	p = check_client(rep, "netclient", 50 * DELAY_MS / 1e3, waited, port);
	assert_int_equal(bp_json_len(bp_json_path(p, "network.peers")), 1);
	assert_true(bp_json_num(bp_json_path(p, "network.round_trips")) >= 50);
	assert_int_equal((uint64_t)bp_json_num(bp_json_path(p, "network.rx_bytes")),
			 50 * (BODY + strlen(hdr_keep)));
	check_sent(p, 50 * strlen(req_keep), 1);
	bp_json_free(rep);
}

/* the example of the problem report: a script fetching 100 items one after another */
static void client__python_urllib__latency_bound_on_the_network(void **state)
{
	int port = serve(DELAY_MS, 60);
	char ps[16], script[600];
	struct bp_json *rep;
	const struct bp_json *p;
	double waited, cap;

	snprintf(ps, sizeof(ps), "%d", port);
	snprintf(script, sizeof(script), "%s/tests/fixtures/fetch.py", getenv("BP_SRC"));
	rep = record("python.json", ARGV("/usr/bin/python3", script, ps, "100"), &waited);
	assert_non_null(rep);
	p = check_client(rep, "python3", REQUESTS * DELAY_MS / 1e3, -1, port);
	assert_true(bp_json_num(bp_json_path(p, "network.round_trips")) >= REQUESTS);
	assert_true(h_evidence_has(p, "100 round trips"));
	assert_int_equal((uint64_t)bp_json_num(bp_json_path(p, "network.rx_bytes")),
			 REQUESTS * (BODY + strlen(hdr_close)));
	cap = bp_json_num(bp_json_path(p, "verdict.amdahl.wait_overlapped_speedup"));
	fprintf(stderr, "  overlapping the waits: at most %.2fx\n", cap);
	assert_true(cap > 1);
	/* the whole recording says what the script says */
	assert_string_equal(bp_json_str(bp_json_path(rep, "summary.verdict.class")), "io-bound");
	assert_true(bp_json_num(bp_json_path(rep, "summary.verdict.amdahl.wait_overlapped_speedup")) ==
		    cap);
	check_woken_by_server(p);
	bp_json_free(rep);
}

/* an event loop: its epoll waits are the network's, not sleep */
static void event_loop__epoll_on_sockets__net_not_sleep(void **state)
{
	int port = serve(DELAY_MS, 60);
	char ps[16];
	struct bp_json *rep;
	const struct bp_json *p;
	double waited;

	snprintf(ps, sizeof(ps), "%d", port);
	/* 50 rounds of 8 requests in flight: 50 delays of waiting, not 400 */
	rep = record("epoll.json", ARGV((char *)h_fixture("epollclient"), ps, "50", "8"),
		     &waited);
	assert_non_null(rep);
	p = check_client(rep, "epollclient", 50 * DELAY_MS / 1e3, waited, 0);
	fprintf(stderr, "  sleep %.3f s\n", bp_json_num(bp_json_path(p, "off_cpu_s.sleep")));
	assert_true(bp_json_num(bp_json_path(p, "off_cpu_s.net")) >
		    4 * bp_json_num(bp_json_path(p, "off_cpu_s.sleep")));
	check_woken_by_server(p);
	bp_json_free(rep);
}

/* the server side: waiting for connections and requests is waiting for work */
static void server__waiting_for_clients__idle_not_io_bound(void **state)
{
	char *argv[] = { (char *)h_bin(), "record", "-o", (char *)h_path("server.json"), "--",
			 (char *)h_fixture("netserve"), "20", "1000", "3", NULL };
	char line[64], ps[16];
	struct bp_json *rep;
	const struct bp_json *p;
	struct run r, c;
	int fd, port;
	pid_t pid;

	pid = h_spawn(argv, &fd);
	assert_true(pid > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 20), 0);
	assert_int_equal(sscanf(line, "port %d", &port), 1);
	snprintf(ps, sizeof(ps), "%d", port);
	assert_int_equal(h_run(ARGV((char *)h_fixture("netclient"), ps, "20"), 30, &c), 0);
	assert_int_equal(c.exit_code, 0);
	h_run_free(&c);
	assert_int_equal(h_wait(pid, fd, -1, 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(h_path("server.json"));
	assert_non_null(rep);
	p = h_find_proc(rep, "netserve");
	assert_non_null(p);
	h_show_verdict("netserve", p);
	fprintf(stderr, "  network waits %.3f s, of them a server's %.3f s\n",
		bp_json_num(bp_json_path(p, "off_cpu_s.net")),
		bp_json_num(bp_json_path(p, "network.server_wait_s")));
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.class")), "idle");
	assert_true(bp_json_num(bp_json_path(p, "network.server_wait_s")) > 1.0);
	bp_json_free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(client__one_request_at_a_time__waits_delay_times_requests,
					  teardown),
		cmocka_unit_test_teardown(client__keepalive__one_peer_every_byte, teardown),
		cmocka_unit_test_teardown(client__python_urllib__latency_bound_on_the_network,
					  teardown),
		cmocka_unit_test_teardown(event_loop__epoll_on_sockets__net_not_sleep, teardown),
		cmocka_unit_test_teardown(server__waiting_for_clients__idle_not_io_bound, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
