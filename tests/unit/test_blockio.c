// SPDX-License-Identifier: GPL-2.0
/* block IO: device names from a fake sysfs, and the exporters on a synthetic profile */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "collect/blockio.h"
#include "export/report_io.h"
#include "model/hist.h"
#include "util/json.h"
#include "model/profile.h"

/* Debian 12's cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

#define DEV(ma, mi)	((uint32_t)(ma) << 20 | (mi))
#define VDA		DEV(254, 0)
#define LOOP0		DEV(7, 0)
#define SDB		DEV(8, 16)

/* ------------------------------------------------------------ device names */

static char sysroot[64];

static void put_file(const char *rel, const char *text)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	for (char *s = dir + strlen(sysroot) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dir, 0755);
		*s = '/';
	}
	mkdir(dir, 0755);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int sysfs_setup(void **state)
{
	strcpy(sysroot, "/tmp/bp-sysfs-XXXXXX");
	if (!mkdtemp(sysroot))
		return -1;
	put_file("dev/block/254:0/uevent", "MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\n");
	put_file("dev/block/259:300/uevent",
		 "MAJOR=259\nMINOR=300\nDEVNAME=nvme0n1p3\nDEVTYPE=partition\nPARTN=3\n");
	put_file("dev/block/8:16/uevent", "MAJOR=8\nMINOR=16\nDEVTYPE=disk\n");
	put_file("dev/block/9:0/uevent", "DEVNAME=\n");
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int sysfs_teardown(void **state)
{
	if (sysroot[0])
		nftw(sysroot, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static void dev_name__devname_of_the_uevent(void **state)
{
	char buf[32];

	assert_int_equal(bp_blockio_dev_name(sysroot, VDA, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "vda");
	/* the kernel encoding: minors above 255 stay in the low 20 bits */
	assert_int_equal(bp_blockio_dev_name(sysroot, DEV(259, 300), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "nvme0n1p3");
}

static void dev_name__missing_or_unnamed__error(void **state)
{
	char buf[32];

	assert_int_equal(bp_blockio_dev_name(sysroot, DEV(1, 1), buf, sizeof(buf)), -ENOENT);
	assert_int_equal(bp_blockio_dev_name(sysroot, SDB, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(bp_blockio_dev_name(sysroot, DEV(9, 0), buf, sizeof(buf)), -EINVAL);
	assert_int_equal(bp_blockio_dev_name(sysroot, DEV(259, 300), buf, 6), -ENAMETOOLONG);
}

static void blockio__untraced__drain_and_finish_do_nothing(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_blockio *b = bp_blockio__new(NULL, sysroot);

	assert_non_null(p);
	assert_non_null(b);
	assert_int_equal(bp_blockio__drain(b, 0, p), 0);
	assert_int_equal(bp_blockio__finish(b, p), 0);
	assert_false(p->io_enabled);
	assert_int_equal(p->nr_io_devs, 0);
	bp_blockio__free(b);
	bp_blockio__free(NULL);
	bp_profile__free(p);
}

/* ------------------------------------------------------------ exporters */

static void stats(struct bp_io_stats *s, uint64_t ops, uint64_t bytes, uint64_t lat_ns,
		  uint32_t slot)
{
	s->ops += ops;
	s->bytes += bytes;
	s->lat_ns += lat_ns;
	s->hist[slot] += ops;
}

static void row(struct bp_profile *p, uint32_t dev, uint32_t pid, uint32_t op, bool kthread,
		const char *comm, uint64_t ops, uint64_t bytes, uint32_t slot)
{
	struct bp_io_row *r = bp_profile__io_row(p, dev, pid, op, kthread, comm, true);

	assert_non_null(r);
	stats(&r->st, ops, bytes, ops * 100000, slot);
}

/*
 * A 10 s window. vda: 1024 reads of 4 KiB in [64, 128) us, 3 writes of
 * 4 KiB in [512, 1024) us, busy 3.8 s, latencies summing to 12 s. loop0:
 * 10 writes, 2 flushes. sdb: seen, but nothing in the window.
 * Rows: odirect (100) reads vda and writes loop0, pid 200 reads vda, and
 * kernel threads write to vda and flush loop0.
 */
static int profile_setup(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_io_dev *d;

	assert_non_null(p);
	p->start_ns = 1000000000ULL;
	p->end_ns = 11000000000ULL;
	p->io_enabled = true;

	d = bp_profile__io_dev(p, VDA, true);
	assert_non_null(d);
	strcpy(d->name, "vda");
	stats(&d->op[BP_IO_READ], 1024, 4 << 20, 11900000000ULL, 6);
	stats(&d->op[BP_IO_WRITE], 3, 12288, 100000000ULL, 9);
	d->busy_ns = 3800000000ULL;
	d->max_inflight = 4;

	d = bp_profile__io_dev(p, LOOP0, true);
	assert_non_null(d);
	strcpy(d->name, "loop0");
	stats(&d->op[BP_IO_WRITE], 10, 40960, 1000000, 3);
	stats(&d->op[BP_IO_OTHER], 2, 0, 1000000, 4);
	d->busy_ns = 500000000ULL;
	d->max_inflight = 1;

	d = bp_profile__io_dev(p, SDB, true);
	assert_non_null(d);
	strcpy(d->name, "sdb");

	row(p, VDA, 100, BP_IO_READ, false, "odirect", 1000, 4096000, 6);
	row(p, LOOP0, 100, BP_IO_WRITE, false, "odirect", 10, 40960, 3);
	row(p, VDA, 200, BP_IO_READ, false, "cat", 24, 98304, 6);
	row(p, VDA, 0, BP_IO_WRITE, true, "kworker/u8:1", 2, 8192, 9);
	row(p, VDA, 0, BP_IO_WRITE, true, "jbd2/vda-8", 1, 4096, 9);
	row(p, LOOP0, 0, BP_IO_OTHER, true, "kworker/u8:1", 2, 0, 4);
	*state = p;
	return 0;
}

static int profile_teardown(void **state)
{
	bp_profile__free(*state);
	return 0;
}

/* {"devices": [...], "io_unattributed": {...}, "proc": {...}} parsed back */
static struct bp_json *export(const struct bp_profile *p, uint32_t pid, double wait_s)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;
	struct bp_json *j;
	char err[128];

	bp_json_w_init(&w, &b, true);
	bp_json_w_begin_object(&w);
	bp_export_json_devices(&w, p);
	bp_json_w_key(&w, "proc");
	bp_export_json_proc_io(&w, p, pid, wait_s);
	bp_json_w_end_object(&w);
	assert_int_equal(bp_json_w_finish(&w), 0);
	j = bp_json_parse(b.data, b.len, err, sizeof(err));
	if (!j)
		fail_msg("export does not parse: %s\n%s", err, bp_buf_str(&b));
	bp_buf_free(&b);
	return j;
}

static uint64_t u(const struct bp_json *j, const char *path)
{
	uint64_t v = UINT64_MAX;

	if (bp_json_uint(bp_json_path(j, path), &v))
		fail_msg("%s: missing or not an unsigned integer", path);
	return v;
}

static const char *str(const struct bp_json *j, const char *path)
{
	const char *s = bp_json_str(bp_json_path(j, path));

	if (!s)
		fail_msg("%s: missing or not a string", path);
	return s;
}

static void json__devices_busiest_first_with_the_contract_keys(void **state)
{
	struct bp_json *j = export(*state, 100, 0.5);
	const struct bp_json *hist;

	/* sdb had nothing in the window */
	assert_int_equal(bp_json_len(bp_json_get(j, "devices")), 2);
	assert_string_equal(str(j, "devices[0].device"), "vda");
	assert_string_equal(str(j, "devices[0].dev"), "254:0");
	assert_int_equal(u(j, "devices[0].ops"), 1027);
	assert_int_equal(u(j, "devices[0].bytes"), (4 << 20) + 12288);
	assert_int_equal(u(j, "devices[0].read_ops"), 1024);
	assert_int_equal(u(j, "devices[0].read_bytes"), 4 << 20);
	assert_int_equal(u(j, "devices[0].write_ops"), 3);
	assert_int_equal(u(j, "devices[0].write_bytes"), 12288);
	assert_int_equal(u(j, "devices[0].other_ops"), 0);
	assert_near(bp_json_num(bp_json_path(j, "devices[0].busy")), 0.38, 1e-12);
	assert_near(bp_json_num(bp_json_path(j, "devices[0].avg_inflight")), 1.2, 1e-12);
	assert_int_equal(u(j, "devices[0].max_inflight"), 4);
	/* 1027 requests: ranks 513.5 and 1016.73 both in the 1024 of [64, 128) us */
	assert_near(bp_json_num(bp_json_path(j, "devices[0].p50_ms")),
		    (64 + 64 * (0.5 * 1027) / 1024) / 1000, 1e-12);
	assert_near(bp_json_num(bp_json_path(j, "devices[0].p99_ms")),
		    (64 + 64 * (0.99 * 1027) / 1024) / 1000, 1e-12);
	hist = bp_json_path(j, "devices[0].latency_hist_us");
	assert_int_equal(bp_json_len(hist), 2);
	assert_int_equal(u(j, "devices[0].latency_hist_us[0].lo"), 64);
	assert_int_equal(u(j, "devices[0].latency_hist_us[0].hi"), 128);
	assert_int_equal(u(j, "devices[0].latency_hist_us[0].count"), 1024);
	assert_int_equal(u(j, "devices[0].latency_hist_us[1].lo"), 512);
	assert_int_equal(u(j, "devices[0].latency_hist_us[1].count"), 3);

	assert_string_equal(str(j, "devices[1].device"), "loop0");
	assert_string_equal(str(j, "devices[1].dev"), "7:0");
	assert_int_equal(u(j, "devices[1].other_ops"), 2);
	assert_near(bp_json_num(bp_json_path(j, "devices[1].busy")), 0.05, 1e-12);
	bp_json_free(j);
}

static void json__kernel_threads__unattributed_by_name(void **state)
{
	struct bp_json *j = export(*state, 100, 0);

	assert_int_equal(u(j, "io_unattributed.ops"), 5);
	assert_int_equal(u(j, "io_unattributed.bytes"), 12288);
	assert_int_equal(bp_json_len(bp_json_path(j, "io_unattributed.by")), 2);
	/* one name across devices and directions, most bytes first */
	assert_string_equal(str(j, "io_unattributed.by[0].comm"), "kworker/u8:1");
	assert_int_equal(u(j, "io_unattributed.by[0].ops"), 4);
	assert_int_equal(u(j, "io_unattributed.by[0].bytes"), 8192);
	assert_string_equal(str(j, "io_unattributed.by[1].comm"), "jbd2/vda-8");
	bp_json_free(j);
}

static void json__process__own_rows_per_direction_and_device(void **state)
{
	struct bp_json *j = export(*state, 100, 0.25);

	assert_int_equal(u(j, "proc.ops"), 1010);
	assert_int_equal(u(j, "proc.bytes"), 4096000 + 40960);
	assert_near(bp_json_num(bp_json_path(j, "proc.wait_s")), 0.25, 0);
	assert_int_equal(u(j, "proc.read_ops"), 1000);
	assert_int_equal(u(j, "proc.read_bytes"), 4096000);
	assert_int_equal(u(j, "proc.write_ops"), 10);
	assert_int_equal(u(j, "proc.write_bytes"), 40960);
	/* rank 505: past the 10 in [8, 16) us, 495 into the 1000 in [64, 128) us */
	assert_near(bp_json_num(bp_json_path(j, "proc.p50_ms")), (64 + 64 * 0.495) / 1000, 1e-12);
	assert_int_equal(bp_json_len(bp_json_path(j, "proc.devices")), 2);
	assert_string_equal(str(j, "proc.devices[0].device"), "vda");
	assert_int_equal(u(j, "proc.devices[0].ops"), 1000);
	assert_int_equal(u(j, "proc.devices[0].read_bytes"), 4096000);
	assert_int_equal(u(j, "proc.devices[0].write_bytes"), 0);
	assert_string_equal(str(j, "proc.devices[1].device"), "loop0");
	assert_int_equal(u(j, "proc.devices[1].write_bytes"), 40960);
	assert_near(bp_json_num(bp_json_path(j, "proc.devices[1].p50_ms")), 0.012, 1e-12);
	bp_json_free(j);
}

static void json__process_without_io__zeros(void **state)
{
	struct bp_json *j = export(*state, 300, 0);

	assert_int_equal(u(j, "proc.ops"), 0);
	assert_int_equal(u(j, "proc.bytes"), 0);
	assert_near(bp_json_num(bp_json_path(j, "proc.p99_ms")), 0, 0);
	assert_int_equal(bp_json_type(bp_json_path(j, "proc.devices")), BP_JSON_ARRAY);
	assert_int_equal(bp_json_len(bp_json_path(j, "proc.devices")), 0);
	bp_json_free(j);
}

static void json__io_not_traced__same_shape_empty(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_json *j;

	assert_non_null(p);
	j = export(p, 1, 0);
	assert_int_equal(bp_json_type(bp_json_get(j, "devices")), BP_JSON_ARRAY);
	assert_int_equal(bp_json_len(bp_json_get(j, "devices")), 0);
	assert_int_equal(u(j, "io_unattributed.ops"), 0);
	assert_int_equal(bp_json_len(bp_json_path(j, "io_unattributed.by")), 0);
	assert_int_equal(u(j, "proc.read_ops"), 0);
	bp_json_free(j);
	bp_profile__free(p);
}

static void text__devices__one_line_each_and_kernel_threads(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	bp_report_text_devices(&b, *state);
	assert_int_equal(b.err, 0);
	assert_string_equal(bp_buf_str(&b),
			    "\nblock IO:\n"
			    "  vda: 1024 reads 4.0 MiB, 3 writes 12 KiB; p50 0.10 ms, p99 0.13 ms;"
			    " busy 38%, 1.2 in flight\n"
			    "  loop0: 10 writes 40 KiB, 2 flushes or discards; p50 0.01 ms,"
			    " p99 0.03 ms; busy 5%, 0.0 in flight\n"
			    "  kernel threads (not attributed to a process): 5 requests 12 KiB,"
			    " most by kworker/u8:1 (8.0 KiB), jbd2/vda-8 (4.0 KiB)\n");
	bp_buf_free(&b);
}

static void text__devices__nothing_without_io(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_buf b = BP_BUF_INIT;

	assert_non_null(p);
	bp_report_text_devices(&b, p);
	p->io_enabled = true;
	bp_report_text_devices(&b, p);
	assert_int_equal(b.len, 0);
	bp_buf_free(&b);
	bp_profile__free(p);
}

static void text__process__typical_size_and_latency(void **state)
{
	char buf[256];
	size_t n;

	n = bp_report_text_proc_io(buf, sizeof(buf), *state, 100);
	assert_string_equal(buf, "vda: 4 KiB reads, p50 0.10 ms, p99 0.13 ms; "
				 "loop0: 4 KiB writes, p50 0.01 ms, p99 0.02 ms");
	assert_int_equal(n, strlen(buf));
	/* truncated to the buffer, still terminated */
	n = bp_report_text_proc_io(buf, 10, *state, 100);
	assert_int_equal(n, 9);
	assert_string_equal(buf, "vda: 4 Ki");
	/* no IO: empty */
	buf[0] = 'x';
	assert_int_equal(bp_report_text_proc_io(buf, sizeof(buf), *state, 300), 0);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest names[] = {
		cmocka_unit_test(dev_name__devname_of_the_uevent),
		cmocka_unit_test(dev_name__missing_or_unnamed__error),
		cmocka_unit_test(blockio__untraced__drain_and_finish_do_nothing),
	};
	const struct CMUnitTest exports[] = {
		cmocka_unit_test_setup_teardown(json__devices_busiest_first_with_the_contract_keys,
						profile_setup, profile_teardown),
		cmocka_unit_test_setup_teardown(json__kernel_threads__unattributed_by_name,
						profile_setup, profile_teardown),
		cmocka_unit_test_setup_teardown(json__process__own_rows_per_direction_and_device,
						profile_setup, profile_teardown),
		cmocka_unit_test_setup_teardown(json__process_without_io__zeros, profile_setup,
						profile_teardown),
		cmocka_unit_test(json__io_not_traced__same_shape_empty),
		cmocka_unit_test_setup_teardown(text__devices__one_line_each_and_kernel_threads,
						profile_setup, profile_teardown),
		cmocka_unit_test(text__devices__nothing_without_io),
		cmocka_unit_test_setup_teardown(text__process__typical_size_and_latency,
						profile_setup, profile_teardown),
	};
	int fail;

	fail = cmocka_run_group_tests_name("blockio names", names, sysfs_setup, sysfs_teardown);
	return fail | cmocka_run_group_tests_name("blockio export", exports, NULL, NULL);
}
