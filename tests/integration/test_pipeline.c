// SPDX-License-Identifier: GPL-2.0
/*
 * Pipelines on real programs (root, real BPF): processes connected by
 * pipes are found as one pipeline, in data-flow order, with the stage that
 * bounds it; the stages that wait on it are blocked-on-peer, naming it.
 * The oracles are the pipelines' construction: the fixture stage given the
 * most work per byte (tests/fixtures/pipestage.c), the head reading the
 * disk with O_DIRECT, sort between gzip -dc and uniq (it must read all its
 * input before it writes a line). The bytes each stage moved are known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

#define MIB	(1024 * 1024)
#define BYTES	(64 * MIB)

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static struct bp_json *record_sh(const char *name, const char *cmd)
{
	struct bp_json *rep = h_record_json(name, ARGV("sh", "-c", (char *)cmd));

	assert_non_null(rep);
	return rep;
}

/*
 * The stage whose command line contains needle. The shell that started the
 * pipeline has every stage in its own command line, and comes first when it
 * took more samples than a stage (a busy machine slows its start): never it.
 */
static const struct bp_json *by_cmd(const struct bp_json *rep, const char *needle)
{
	const struct bp_json *procs = bp_json_get(rep, "processes");
	size_t i;

	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);
		const char *c = bp_json_str(bp_json_get(p, "cmdline"));

		if (c && strncmp(c, "sh -c ", 6) && strstr(c, needle))
			return p;
	}
	fail_msg("no process runs \"%s\"", needle);
	return NULL;
}

static int pid_of(const struct bp_json *p)
{
	return (int)bp_json_num(bp_json_get(p, "pid"));
}

static void show(const struct bp_json *rep)
{
	const struct bp_json *pl = bp_json_get(rep, "pipelines"), *ev;
	size_t i;

	for (i = 0; i < bp_json_len(pl); i++)
		fprintf(stderr, "  pipeline %s; bottleneck %.0f\n",
			bp_json_str(bp_json_get(bp_json_at(pl, i), "name")),
			bp_json_num(bp_json_get(bp_json_at(pl, i), "bottleneck")));
	ev = bp_json_path(rep, "summary.verdict.evidence");
	fprintf(stderr, "  summary: %s (%s)\n",
		bp_json_str(bp_json_path(rep, "summary.verdict.class")),
		bp_json_str(bp_json_path(rep, "summary.verdict.confidence")));
	for (i = 0; i < bp_json_len(ev); i++)
		fprintf(stderr, "    %s\n", bp_json_str(bp_json_at(ev, i)));
}

/* the one pipeline, with exactly these stages in this order; its bottleneck */
static const struct bp_json *pipeline(const struct bp_json *rep, const struct bp_json **stages,
				      int n, const struct bp_json *bottleneck)
{
	const struct bp_json *pls = bp_json_get(rep, "pipelines"), *pl;
	int i;

	show(rep);
	assert_int_equal(bp_json_len(pls), 1);
	pl = bp_json_at(pls, 0);
	assert_int_equal(bp_json_len(bp_json_get(pl, "stages")), n);
	for (i = 0; i < n; i++)
		assert_int_equal((int)bp_json_num(bp_json_at(bp_json_get(pl, "stages"), i)),
				 pid_of(stages[i]));
	assert_int_equal((int)bp_json_num(bp_json_get(pl, "bottleneck")), pid_of(bottleneck));
	return pl;
}

/* a stage that waited on its neighbour: blocked-on-peer, naming it and the way */
static void blocked_on(const struct bp_json *p, const struct bp_json *peer, const char *dir)
{
	fprintf(stderr, "  %s (pid %d): %s, peer %.0f %s, waited %.0f%% of its wall time\n",
		bp_json_str(bp_json_get(p, "cmdline")), pid_of(p),
		bp_json_str(bp_json_path(p, "verdict.class")),
		bp_json_num(bp_json_path(p, "verdict.peer.pid")),
		bp_json_str(bp_json_path(p, "verdict.peer.direction")),
		bp_json_num(bp_json_path(p, "verdict.peer.wait_share")) * 100);
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.class")), "blocked-on-peer");
	assert_int_equal((int)bp_json_num(bp_json_path(p, "verdict.peer.pid")), pid_of(peer));
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.peer.comm")),
			    bp_json_str(bp_json_get(peer, "comm")));
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.peer.direction")), dir);
}

/* the bottleneck has a verdict of its own, and the recording's is that one */
static void bounds_it(const struct bp_json *rep, const struct bp_json *p)
{
	const char *cls = bp_json_str(bp_json_path(p, "verdict.class"));
	const struct bp_json *crit = bp_json_path(rep, "summary.critical_path");

	fprintf(stderr, "  bottleneck %s (pid %d): %s (%s)\n",
		bp_json_str(bp_json_get(p, "cmdline")), pid_of(p), cls,
		bp_json_str(bp_json_path(p, "verdict.confidence")));
	assert_string_not_equal(cls, "blocked-on-peer");
	assert_string_not_equal(cls, "idle");
	assert_string_equal(bp_json_str(bp_json_path(rep, "summary.verdict.class")), cls);
	assert_true(bp_json_len(crit) >= 2);
	assert_int_equal((int)bp_json_num(bp_json_at(crit, bp_json_len(crit) - 1)), pid_of(p));
	assert_non_null(strstr(bp_json_str(bp_json_at(bp_json_path(rep,
						     "summary.verdict.evidence"), 0)), "bound by"));
}

/* the bytes a stage moved: what it passed on, plus what starting a program reads */
static void moved(const struct bp_json *p, const char *key, uint64_t bytes)
{
	uint64_t v = bp_json_num(bp_json_path(p, key));

	fprintf(stderr, "  %s %s %llu (%llu through the pipe)\n",
		bp_json_str(bp_json_get(p, "comm")), key, (unsigned long long)v,
		(unsigned long long)bytes);
	assert_true(v >= bytes && v <= bytes + MIB);
}

static void slow_middle__bounds_the_pipeline(void **state)
{
	char cmd[1024];
	struct bp_json *rep;
	const struct bp_json *st[3];

	snprintf(cmd, sizeof(cmd), "%s produce %d 0 | %s filter 20000 | %s consume 0",
		 h_fixture("pipestage"), BYTES, h_fixture("pipestage"), h_fixture("pipestage"));
	rep = record_sh("middle.json", cmd);
	st[0] = by_cmd(rep, "pipestage produce");
	st[1] = by_cmd(rep, "pipestage filter");
	st[2] = by_cmd(rep, "pipestage consume");
	pipeline(rep, st, 3, st[1]);
	blocked_on(st[0], st[1], "output");
	blocked_on(st[2], st[1], "input");
	bounds_it(rep, st[1]);
	moved(st[0], "syscall_bytes.written", BYTES);
	moved(st[1], "syscall_bytes.read", BYTES);
	moved(st[1], "syscall_bytes.written", BYTES);
	moved(st[2], "syscall_bytes.read", BYTES);
	/* who ended the consumer's waits: the filter, through the pipe */
	{
		const struct bp_json *w = bp_json_at(bp_json_get(st[2], "woken_by"), 0);

		assert_non_null(w);
		assert_int_equal((int)bp_json_num(bp_json_get(w, "pid")), pid_of(st[1]));
		assert_string_equal(bp_json_str(bp_json_get(w, "class")), "pipe");
		assert_string_equal(bp_json_str(bp_json_get(w, "context")), "task");
	}
	bp_json_free(rep);
}

static void slow_consumer__producer_waits_on_it(void **state)
{
	char cmd[1024];
	struct bp_json *rep;
	const struct bp_json *st[2];

	snprintf(cmd, sizeof(cmd), "%s produce %d 0 | %s consume 20000",
		 h_fixture("pipestage"), BYTES, h_fixture("pipestage"));
	rep = record_sh("consumer.json", cmd);
	st[0] = by_cmd(rep, "pipestage produce");
	st[1] = by_cmd(rep, "pipestage consume");
	pipeline(rep, st, 2, st[1]);
	blocked_on(st[0], st[1], "output");
	bounds_it(rep, st[1]);
	bp_json_free(rep);
}

/* a disk-bound head: dd reading with O_DIRECT, one request at a time */
static void disk_bound_head__consumer_waits_on_the_reader(void **state)
{
	const char *path = h_path("disk.data");
	char cmd[1024];
	struct bp_json *rep;
	const struct bp_json *st[2];
	FILE *f = fopen(path, "w");
	uint64_t x = 1;
	int i;

	/* real blocks on the disk (holes are read without any IO) */
	assert_non_null(f);
	for (i = 0; i < BYTES / 8; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		fwrite(&x, 8, 1, f);
	}
	assert_int_equal(fflush(f), 0);
	assert_int_equal(fsync(fileno(f)), 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "dd if=%s iflag=direct bs=4k status=none | %s consume 0", path,
		 h_fixture("pipestage"));
	rep = record_sh("disk.json", cmd);
	st[0] = by_cmd(rep, "dd if=");
	st[1] = by_cmd(rep, "pipestage consume");
	pipeline(rep, st, 2, st[0]);
	blocked_on(st[1], st[0], "input");
	bounds_it(rep, st[0]);
	fprintf(stderr, "  dd waited %.3f s on block IO in %.3f s; %.0f reads, %.0f bytes "
		"(%d, %d written)\n",
		bp_json_num(bp_json_path(st[0], "off_cpu_s.io")),
		bp_json_num(bp_json_get(st[0], "wall_s")),
		bp_json_num(bp_json_path(st[0], "io.read_ops")),
		bp_json_num(bp_json_path(st[0], "io.read_bytes")), BYTES / 4096, BYTES);
	/* every read waited on the disk, whatever else the machine does */
	assert_true(bp_json_num(bp_json_path(st[0], "off_cpu_s.io")) > 0);
	assert_true(bp_json_num(bp_json_path(st[0], "io.read_ops")) >= BYTES / 4096);
	assert_true(bp_json_num(bp_json_path(st[0], "io.read_bytes")) >= BYTES);
	bp_json_free(rep);
}

/* the problem report's example: each stage was judged alone */
static void gzip_sort_uniq_wc__bound_by_sort(void **state)
{
	const char *gz = h_path("words.gz");
	char cmd[1024];
	struct bp_json *rep;
	const struct bp_json *st[4];
	uint64_t x = 7;
	FILE *f;
	int i;

	snprintf(cmd, sizeof(cmd), "gzip -1 > %s", gz);
	f = popen(cmd, "w");
	assert_non_null(f);
	/* 2M lines over 20000 words: sort has n log n work, uniq and wc one pass */
	for (i = 0; i < 2000000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		fprintf(f, "w%05u\n", (unsigned int)((x >> 33) % 20000));
	}
	assert_int_equal(pclose(f), 0);
	snprintf(cmd, sizeof(cmd), "gzip -dc %s | LC_ALL=C sort | uniq -c | wc -l", gz);
	rep = record_sh("gzip.json", cmd);
	st[0] = by_cmd(rep, "gzip -dc");
	st[1] = h_find_proc(rep, "sort");
	st[2] = h_find_proc(rep, "uniq");
	st[3] = h_find_proc(rep, "wc");
	assert_non_null(st[1]);
	assert_non_null(st[2]);
	assert_non_null(st[3]);
	pipeline(rep, st, 4, st[1]);
	blocked_on(st[2], st[1], "input");
	blocked_on(st[3], st[2], "input");
	bounds_it(rep, st[1]);
	/* sort passed on every line it read: 7 bytes each */
	assert_true(bp_json_num(bp_json_path(st[2], "syscall_bytes.read")) >= 2000000 * 7);
	bp_json_free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(slow_middle__bounds_the_pipeline, teardown),
		cmocka_unit_test_teardown(slow_consumer__producer_waits_on_it, teardown),
		cmocka_unit_test_teardown(disk_bound_head__consumer_waits_on_the_reader, teardown),
		cmocka_unit_test_teardown(gzip_sort_uniq_wc__bound_by_sort, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
