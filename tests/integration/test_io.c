// SPDX-License-Identifier: GPL-2.0
/*
 * Block IO accounting end to end (root, real BPF): requests are counted on
 * the device the data lives on and charged to the process that submitted
 * them. The data files live in the test's temporary directory on the root
 * filesystem (a real disk here) and go with it in teardown. How long the
 * fixtures waited for their IO is the kernel's count (tests/fixtures/
 * fixture.h): their time blocked, since their reads, writes and syncs are
 * all they block on. How long that is depends on the disk and on how busy
 * the machine is; that boundprof charges that wait to them, as IO, does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/bpf.h>

#include "boundprof.h"
#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static void print_run(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s---\n", what,
		r->exit_code, r->out, r->err);
}

/* a file with real blocks on disk (O_DIRECT reads of holes do no IO) */
static void make_file(const char *path, size_t mib)
{
	static char chunk[1 << 20];
	uint64_t x = 88172645463325252ULL;
	size_t i, j;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < mib; i++) {
		for (j = 0; j < sizeof(chunk); j += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(chunk + j, &x, 8);
		}
		assert_int_equal(write(fd, chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
	}
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

/*
 * The block device holding the directory: "MAJ:MIN" and its kernel name,
 * the last part of /sys/dev/block/MAJ:MIN's target. False when the
 * filesystem is not on a block device (tmpfs, overlay).
 */
static bool device_of(const char *path, char *majmin, size_t mlen, char *name, size_t nlen)
{
	char link[64], real[PATH_MAX];
	struct stat st;
	const char *base;

	assert_int_equal(stat(path, &st), 0);
	snprintf(majmin, mlen, "%u:%u", major(st.st_dev), minor(st.st_dev));
	snprintf(link, sizeof(link), "/sys/dev/block/%s", majmin);
	if (!realpath(link, real))
		return false;
	base = strrchr(real, '/');
	snprintf(name, nlen, "%s", base ? base + 1 : real);
	return true;
}

/* the element of an array of objects whose "device" is name */
static const struct bp_json *find_device(const struct bp_json *arr, const char *name)
{
	size_t i;

	for (i = 0; i < bp_json_len(arr); i++) {
		const char *d = bp_json_str(bp_json_get(bp_json_at(arr, i), "device"));

		if (d && !strcmp(d, name))
			return bp_json_at(arr, i);
	}
	return NULL;
}

static uint64_t num(const struct bp_json *obj, const char *key)
{
	uint64_t v = 0;

	if (bp_json_uint(bp_json_get(obj, key), &v))
		fail_msg("\"%s\" missing or not a count", key);
	return v;
}

static bool within(uint64_t got, uint64_t want, double frac)
{
	return got >= want * (1 - frac) && got <= want * (1 + frac);
}

/* what the unattributed (kernel thread) IO was, for the log */
static void print_unattributed(const struct bp_json *rep)
{
	const struct bp_json *by = bp_json_path(rep, "io_unattributed.by");
	size_t i;

	fprintf(stderr, "  unattributed: %.0f ops %.0f bytes",
		bp_json_num(bp_json_path(rep, "io_unattributed.ops")),
		bp_json_num(bp_json_path(rep, "io_unattributed.bytes")));
	for (i = 0; i < bp_json_len(by) && i < 4; i++)
		fprintf(stderr, "%s %s %.0f ops %.0f bytes", i ? "," : ":",
			bp_json_str(bp_json_get(bp_json_at(by, i), "comm")),
			bp_json_num(bp_json_get(bp_json_at(by, i), "ops")),
			bp_json_num(bp_json_get(bp_json_at(by, i), "bytes")));
	fprintf(stderr, "\n");
}

/* random 4 KiB O_DIRECT reads: every byte the fixture read, on its device and its process */
static void test_odirect_reads(void **state)
{
	const char *data = h_path("odirect.data"), *json = h_path("odirect.json");
	const struct bp_json *proc, *io, *pdev, *dev;
	char majmin[32], name[64], count[] = "12000";
	unsigned long long fixture_bytes = 0;
	struct bp_json *rep;
	struct h_sched k;
	const char *line;
	struct run r;

	make_file(data, 32);
	h_sched_arm();
	if (!device_of(data, majmin, sizeof(majmin), name, sizeof(name))) {
		fprintf(stderr, "SKIPPED: %s is not on a block device\n", h_tmpdir());
		skip();
	}
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)json,
				    "--", (char *)h_fixture("odirect"), (char *)data, count),
			       120, &r), 0);
	if (r.exit_code)
		print_run("record -- odirect", &r);
	assert_int_equal(r.exit_code, 0);
	line = strstr(r.out, "read ");
	assert_non_null(line);
	assert_int_equal(sscanf(line, "read %llu", &fixture_bytes), 1);
	assert_int_equal(fixture_bytes, 12000ULL * 4096);
	h_run_free(&r);
	assert_int_equal(h_sched_read("odirect", &k, 1), 1);

	rep = h_json_file(json);
	assert_non_null(rep);
	proc = h_find_proc(rep, "odirect");
	assert_non_null(proc);
	io = bp_json_get(proc, "io");
	pdev = find_device(bp_json_get(io, "devices"), name);
	dev = find_device(bp_json_get(rep, "devices"), name);
	fprintf(stderr, "odirect on %s (%s): fixture read %llu bytes\n", name, majmin,
		fixture_bytes);
	fprintf(stderr, "  process io: %llu read ops, %llu read bytes (%+.2f%%), %llu writes,"
		" p50 %.3f ms, p99 %.3f ms, wait_s %.3f\n",
		(unsigned long long)num(io, "read_ops"), (unsigned long long)num(io, "read_bytes"),
		100.0 * ((double)num(io, "read_bytes") / fixture_bytes - 1),
		(unsigned long long)num(io, "write_ops"), bp_json_num(bp_json_get(io, "p50_ms")),
		bp_json_num(bp_json_get(io, "p99_ms")), bp_json_num(bp_json_get(io, "wait_s")));
	assert_non_null(dev);
	fprintf(stderr, "  device %s (%s): %llu read ops %llu read bytes, %llu writes, %llu other,"
		" busy %.3f, avg in flight %.2f, max %llu, p50 %.3f ms, p99 %.3f ms\n",
		bp_json_str(bp_json_get(dev, "device")), bp_json_str(bp_json_get(dev, "dev")),
		(unsigned long long)num(dev, "read_ops"),
		(unsigned long long)num(dev, "read_bytes"),
		(unsigned long long)num(dev, "write_ops"),
		(unsigned long long)num(dev, "other_ops"), bp_json_num(bp_json_get(dev, "busy")),
		bp_json_num(bp_json_get(dev, "avg_inflight")),
		(unsigned long long)num(dev, "max_inflight"),
		bp_json_num(bp_json_get(dev, "p50_ms")), bp_json_num(bp_json_get(dev, "p99_ms")));
	print_unattributed(rep);

	/* the process: what it read, within 5%, all of it on the file's device */
	assert_true(within(num(io, "read_bytes"), fixture_bytes, 0.05));
	assert_true(within(num(io, "read_ops"), 12000, 0.05));
	assert_true(within(num(io, "bytes"), fixture_bytes, 0.05));
	assert_non_null(pdev);
	assert_true(within(num(pdev, "read_bytes"), fixture_bytes, 0.05));
	assert_true(bp_json_num(bp_json_get(io, "p50_ms")) > 0);
	assert_true(bp_json_num(bp_json_get(io, "p99_ms")) >=
		    bp_json_num(bp_json_get(io, "p50_ms")));
	/* it waited on the disk, then for a CPU after each read, as the kernel says */
	assert_true(h_io_rq_split("odirect", &k, proc));
	assert_true(bp_json_num(bp_json_get(io, "wait_s")) ==
		    bp_json_num(bp_json_path(proc, "off_cpu_s.io")));

	/* the device: at least what the fixture read (the rest of the system adds to it) */
	assert_string_equal(bp_json_str(bp_json_get(dev, "dev")), majmin);
	assert_true(num(dev, "read_bytes") >= fixture_bytes * 0.95);
	assert_true(num(dev, "read_ops") >= 12000 * 0.95);
	/* one request at a time: the disk was busy, with about one request in flight */
	assert_true(bp_json_num(bp_json_get(dev, "busy")) > 0.05);
	assert_true(bp_json_num(bp_json_get(dev, "busy")) <= 1.0);
	assert_true(bp_json_num(bp_json_get(dev, "avg_inflight")) > 0.05);
	assert_true(num(dev, "max_inflight") >= 1);
	assert_true(bp_json_len(bp_json_get(dev, "latency_hist_us")) > 0);
	bp_json_free(rep);
}

/* small writes with fsync: written from the process's own context, not by writeback threads */
static void test_fsync_writes(void **state)
{
	const char *data = h_path("fsync.data"), *json = h_path("fsync.json");
	const struct bp_json *proc, *io, *pdev;
	char majmin[32], name[64], count[] = "3000";
	unsigned long long wrote = 0, syncs = 0;
	struct bp_json *rep;
	struct h_sched k;
	const char *line;
	struct run r;

	if (!device_of(h_tmpdir(), majmin, sizeof(majmin), name, sizeof(name))) {
		fprintf(stderr, "SKIPPED: %s is not on a block device\n", h_tmpdir());
		skip();
	}
	h_sched_arm();
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)json,
				    "--", (char *)h_fixture("fsyncer"), (char *)data, count),
			       120, &r), 0);
	if (r.exit_code)
		print_run("record -- fsyncer", &r);
	assert_int_equal(r.exit_code, 0);
	line = strstr(r.out, "wrote ");
	assert_non_null(line);
	assert_int_equal(sscanf(line, "wrote %llu in %llu fsyncs", &wrote, &syncs), 2);
	assert_int_equal(syncs, 3000);
	h_run_free(&r);
	assert_int_equal(h_sched_read("fsyncer", &k, 1), 1);

	rep = h_json_file(json);
	assert_non_null(rep);
	proc = h_find_proc(rep, "fsyncer");
	assert_non_null(proc);
	io = bp_json_get(proc, "io");
	pdev = find_device(bp_json_get(io, "devices"), name);
	fprintf(stderr, "fsyncer on %s: %llu bytes in %llu fsyncs\n", name, wrote, syncs);
	fprintf(stderr, "  process io: %llu write ops %llu write bytes, %llu other (flush) ops,"
		" %llu reads, p50 %.3f ms, p99 %.3f ms\n",
		(unsigned long long)num(io, "write_ops"),
		(unsigned long long)num(io, "write_bytes"),
		(unsigned long long)num(io, "other_ops"), (unsigned long long)num(io, "read_ops"),
		bp_json_num(bp_json_get(io, "p50_ms")), bp_json_num(bp_json_get(io, "p99_ms")));
	print_unattributed(rep);

	/* every fsync wrote at least the block it changed, from the process itself */
	assert_true(num(io, "write_ops") >= syncs);
	assert_true(num(io, "write_bytes") >= syncs * 4096);
	assert_true(num(io, "write_bytes") >= wrote);
	assert_non_null(pdev);
	assert_true(num(pdev, "write_bytes") >= syncs * 4096);
	/* and it waited for them, as long as the kernel says it was blocked */
	fprintf(stderr, "  fsyncer off-CPU: IO %.4f s, other %.4f s, locks %.4f s\n",
		bp_json_num(bp_json_path(proc, "off_cpu_s.io")),
		bp_json_num(bp_json_path(proc, "off_cpu_s.other")),
		bp_json_num(bp_json_path(proc, "off_cpu_s.lock")));
	assert_true(h_io_rq_split("fsyncer", &k, proc));
	bp_json_free(rep);
}

/* the id of the BPF map called name, of that type, that process pid holds; 0 if none */
static unsigned int map_of(pid_t pid, const char *name, const char *type)
{
	char path[128], link[64], line[128], id[32];
	unsigned int found = 0;
	int fd;

	for (fd = 0; fd < 1024 && !found; fd++) {
		unsigned int mid = 0;
		struct run r;
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:bpf-map"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			sscanf(line, "map_id: %u", &mid);
		fclose(f);
		snprintf(id, sizeof(id), "%u", mid);
		if (!mid || h_run(ARGV("bpftool", "map", "show", "id", id), 10, &r))
			continue;
		if (!r.exit_code && strstr(r.out, name) && strstr(r.out, type))
			found = mid;
		h_run_free(&r);
	}
	return found;
}

/*
 * A request the programs track whose request structure no longer holds it
 * (the kernel ran no completion program for it, ~1 in 10^3..10^4 here, and
 * no later request reused the structure) is counted when the recording
 * ends. The kernel cannot be made to skip a completion on demand, so the
 * test makes the state itself: after odirect ended it puts one of odirect's
 * tracked requests back into a free slot of the table, as the request 8
 * bytes into its real request structure (whose fields there hold no
 * request's start), as a request started and then lost would leave it.
 * The table is read through bpf(2): its 16384 slots make a 10-MB bpftool
 * dump, longer to read here than odirect runs.
 */
#define UNSEEN_READS	8000
#define IO_SLOTS	16384

/* struct io_slot of bpf/blockio.bpf.c */
struct t_io_slot {
	uint64_t id;		/* the request's address; 0: free; low bit: being written */
	struct bp_io_key key;
	uint64_t start_ns, bytes, rq_start;
};

static void test_ended_unseen_counted_at_the_end(void **state)
{
	const char *data = h_path("unseen.data"), *json = h_path("unseen.json");
	const char *done = h_path("odirect.done");
	struct t_io_slot v, e = {}, *vals;
	const struct bp_json *proc;
	struct bp_json *rep;
	unsigned int mid = 0;
	int i, out_fd, err_fd, fd = -1, odirect = 0, looks = 0;
	uint32_t k, free_k = IO_SLOTS, n, out_batch, *keys;
	char cmd[1024];
	struct run r;
	pid_t rec;

	make_file(data, 32);
	/*
	 * The same reads once before the recording (odirect's offsets are
	 * the same each run): whatever a first run reads besides them (1 or
	 * 2 more requests of odirect's, completed, in 1 run of 13 in a fresh
	 * clone and 1 of 12 here; the printed bytes tell their size next
	 * time) is then cached, so the recorded run's requests are its reads.
	 */
	snprintf(cmd, sizeof(cmd), "%d", UNSEEN_READS);
	assert_int_equal(h_run(ARGV((char *)h_fixture("odirect"), (char *)data, cmd), 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	snprintf(cmd, sizeof(cmd), "%s %s %d >/dev/null && touch %s && sleep 4",
		 h_fixture("odirect"), data, UNSEEN_READS, done);
	rec = h_spawn2(ARGV((char *)h_bin(), "record", "-v", "-o", (char *)json, "--", "sh", "-c",
			    cmd), &out_fd, &err_fd);
	assert_true(rec > 0);
	/*
	 * One of odirect's requests while it reads: QD1, one in flight about
	 * half the time. The whole array in one batch read a look (~1 ms):
	 * a look of 16,384 single lookups took 20-40 ms on a busy guest, and
	 * a fast disk's 8,000 reads (0.05 ms each) were over after a handful
	 * of looks, none of which had caught one in flight (once in ~23
	 * fresh runs, 2026-12-07).
	 */
	keys = calloc(IO_SLOTS, sizeof(*keys));
	vals = calloc(IO_SLOTS, sizeof(*vals));
	assert_true(keys && vals);
	for (i = 0; i < 20000 && !e.id && access(done, F_OK); i++) {
		if (fd < 0 && (mid = map_of(rec, "io_rqs", "array")))
			fd = bpf_map_get_fd_by_id(mid);
		if (fd < 0) {
			usleep(1000);
			continue;
		}
		n = IO_SLOTS;
		if (bpf_map_lookup_batch(fd, NULL, &out_batch, keys, vals, &n, NULL) &&
		    errno != ENOENT)
			fail_msg("batch read of io_rqs: %s", strerror(errno));
		looks++;
		for (k = 0; k < n && !e.id; k++)
			if (vals[k].id && !(vals[k].id & 1) &&
			    !strncmp(vals[k].key.comm, "odirect", sizeof(vals[k].key.comm)))
				e = vals[k];
	}
	free(keys);
	free(vals);
	fprintf(stderr, "io_rqs looked at %d times until one of odirect's requests was in flight\n",
		looks);
	assert_true(fd >= 0);
	assert_true(e.id != 0);
	odirect = (int)e.key.tgid;
	for (i = 0; i < 3000 && access(done, F_OK); i++)
		usleep(10000);
	assert_int_equal(access(done, F_OK), 0);
	/* a free slot, from the last: the sweep looks at every slot */
	for (k = IO_SLOTS; k-- > 0 && free_k == IO_SLOTS;)
		if (!bpf_map_lookup_elem(fd, &k, &v) && !v.id)
			free_k = k;
	assert_true(free_k < IO_SLOTS);
	/*
	 * Inside the same request structure, 8 bytes on: an address no
	 * request will ever have, so that no later request's start can end
	 * it before the sweep does (the real one is reused within
	 * milliseconds), and whose fields read as another request's; and a
	 * start stamp no request has.
	 */
	e.id += 8;
	e.rq_start = 1;
	assert_int_equal(bpf_map_update_elem(fd, &free_k, &e, BPF_ANY), 0);
	close(fd);

	assert_int_equal(h_wait(rec, out_fd, err_fd, 60, &r), 0);
	if (r.exit_code || !strstr(r.err, "found at a window's end"))
		print_run("record", &r);
	assert_int_equal(r.exit_code, 0);
	/* "N requests ended without a completion event (M found at a window's end)" */
	assert_non_null(strstr(r.err, "found at a window's end"));
	assert_null(strstr(r.err, "(0 found at a window's end)"));
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	proc = h_find_proc(rep, "odirect");
	assert_non_null(proc);
	fprintf(stderr, "odirect (pid %d): %d reads and one left behind: %.0f read ops "
		"(%.0f bytes), %.0f completions unseen, %.0f unmatched\n", odirect, UNSEEN_READS,
		bp_json_num(bp_json_path(proc, "io.read_ops")),
		bp_json_num(bp_json_path(proc, "io.read_bytes")),
		bp_json_num(bp_json_path(rep, "drops_detail.io_completions_unseen")),
		bp_json_num(bp_json_path(rep, "drops_detail.io_completions_unmatched")));
	assert_int_equal((int)bp_json_num(bp_json_get(proc, "pid")), odirect);
	assert_int_equal((int)bp_json_num(bp_json_path(proc, "io.read_ops")), UNSEEN_READS + 1);
	assert_true(bp_json_num(bp_json_path(rep, "drops_detail.io_completions_unseen")) >= 1);
	assert_int_equal((int)bp_json_num(bp_json_path(rep, "drops_detail.io_completions_unmatched")),
			 0);
	bp_json_free(rep);
}

/*
 * Reads while both CPUs are busy: the disk's interrupt lands on top of the
 * spinners, which never touched the file. The reads' waits are ended by
 * the interrupt, and woken_by says so without naming the task it came on
 * top of (which it once named as the waker).
 */
static void test_interrupt_wakers_name_no_task(void **state)
{
	const char *data = h_path("busy.data");
	const struct bp_json *proc, *wk, *w;
	char majmin[32], name[64], line[64];
	int irq = 0, idle = 0, out = -1;
	struct bp_json *rep;
	pid_t spin;
	size_t i;

	make_file(data, 16);
	if (!device_of(data, majmin, sizeof(majmin), name, sizeof(name))) {
		fprintf(stderr, "SKIPPED: %s is not on a block device\n", h_tmpdir());
		skip();
	}
	spin = h_spawn(ARGV((char *)h_fixture("spin"), "60", "2"), &out);
	assert_true(spin > 0);
	assert_int_equal(h_read_line(out, line, sizeof(line), 10), 0);
	rep = h_record_json("busy.json", ARGV((char *)h_fixture("odirect"), (char *)data, "3000"));
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	close(out);
	assert_non_null(rep);
	proc = h_find_proc(rep, "odirect");
	assert_non_null(proc);
	wk = bp_json_get(proc, "woken_by");
	assert_true(bp_json_len(wk) > 0);
	for (i = 0; i < bp_json_len(wk); i++) {
		const char *ctx, *cls, *comm;

		w = bp_json_at(wk, i);
		ctx = bp_json_str(bp_json_get(w, "context"));
		cls = bp_json_str(bp_json_get(w, "class"));
		comm = bp_json_str(bp_json_get(w, "comm"));
		assert_non_null(ctx);
		assert_non_null(cls);
		assert_non_null(comm);
		fprintf(stderr, "  woken by: %s, pid %s, comm '%s', %s waits, %.3f s\n", ctx,
			bp_json_type(bp_json_get(w, "pid")) == BP_JSON_NULL ? "null" : "set", comm,
			cls, bp_json_num(bp_json_get(w, "seconds")));
		/* the spinners ended none of its waits */
		assert_string_not_equal(comm, "spin");
		if (!strcmp(ctx, "hardirq") || !strcmp(ctx, "softirq")) {
			irq++;
			assert_int_equal(bp_json_type(bp_json_get(w, "pid")), BP_JSON_NULL);
			assert_int_equal(bp_json_type(bp_json_get(w, "tid")), BP_JSON_NULL);
			assert_string_equal(comm, "");
		} else if (!strcmp(ctx, "idle")) {
			idle++;
		}
	}
	fprintf(stderr, "  %d interrupt and %d idle-CPU waker entries\n", irq, idle);
	bp_json_free(rep);
	/*
	 * Both CPUs ran the spinners, so its reads end in interrupts on top of
	 * them, unless this kernel completes IO in threads (threadirqs,
	 * PREEMPT_RT): then a kernel thread woke it, and nothing here lands on
	 * the spinners for the check above to catch.
	 */
	if (!irq) {
		fprintf(stderr, "SKIPPED: no read ended in a hardirq or softirq on this kernel "
				"(threaded interrupts?): nothing came on top of the spinners\n");
		skip();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_odirect_reads, teardown),
		cmocka_unit_test_teardown(test_fsync_writes, teardown),
		cmocka_unit_test_teardown(test_ended_unseen_counted_at_the_end, teardown),
		cmocka_unit_test_teardown(test_interrupt_wakers_name_no_task, teardown),
	};

	if (!h_need_root() || !h_have_schedstat())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("io", tests, NULL, NULL);
}
