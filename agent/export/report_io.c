// SPDX-License-Identifier: GPL-2.0
/* Block IO in the reports (formats.md): devices, unattributed IO, per-process IO. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/report_io.h"
#include "model/hist.h"

/* one device's IO of one process */
struct proc_dev {
	uint32_t dev;
	struct bp_io_stats op[BP_IO_OP__MAX];
};

/* what a process (or a kernel thread name) did: per op, overall, per device */
struct io_sum {
	struct bp_io_stats op[BP_IO_OP__MAX];
	struct proc_dev *devs;
	uint32_t nr_devs;
};

static void stats_add(struct bp_io_stats *dst, const struct bp_io_stats *src)
{
	dst->ops += src->ops;
	dst->bytes += src->bytes;
	dst->lat_ns += src->lat_ns;
	bp_hist_merge(dst->hist, src->hist);
}

static void stats_total(const struct bp_io_stats *op, struct bp_io_stats *all)
{
	int i;

	memset(all, 0, sizeof(*all));
	for (i = 0; i < BP_IO_OP__MAX; i++)
		stats_add(all, &op[i]);
}

static double ms(double us)
{
	return us / 1000.0;
}

static const struct bp_io_dev *find_dev(const struct bp_profile *p, uint32_t dev)
{
	uint32_t i;

	for (i = 0; i < p->nr_io_devs; i++)
		if (p->io_devs[i].dev == dev)
			return &p->io_devs[i];
	return NULL;
}

static const char *dev_name(const struct bp_profile *p, uint32_t dev, char *buf, size_t len)
{
	const struct bp_io_dev *d = find_dev(p, dev);

	if (d && d->name[0])
		return d->name;
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
	return buf;
}

/* the process's rows (not kernel threads), per op and per device; 0 or -ENOMEM */
static int proc_sum(const struct bp_profile *p, uint32_t pid, struct io_sum *s)
{
	uint32_t i, j;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < p->nr_io_rows; i++) {
		const struct bp_io_row *r = &p->io_rows[i];

		if (r->pid != pid || r->kthread || r->op >= BP_IO_OP__MAX)
			continue;
		stats_add(&s->op[r->op], &r->st);
		for (j = 0; j < s->nr_devs && s->devs[j].dev != r->dev; j++)
			;
		if (j == s->nr_devs) {
			struct proc_dev *n = realloc(s->devs, (j + 1) * sizeof(*n));

			if (!n)
				return -ENOMEM;
			s->devs = n;
			memset(&n[j], 0, sizeof(n[j]));
			n[j].dev = r->dev;
			s->nr_devs++;
		}
		stats_add(&s->devs[j].op[r->op], &r->st);
	}
	return 0;
}

static uint64_t ops_of(const struct bp_io_stats *op)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < BP_IO_OP__MAX; i++)
		n += op[i].ops;
	return n;
}

/* busiest first, then by device number: equal profiles give equal reports */
static int cmp_proc_dev(const void *a, const void *b)
{
	const struct proc_dev *x = a, *y = b;
	uint64_t ox = ops_of(x->op), oy = ops_of(y->op);

	if (ox != oy)
		return ox < oy ? 1 : -1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

static int cmp_dev_ptr(const void *a, const void *b)
{
	const struct bp_io_dev *x = *(const struct bp_io_dev *const *)a;
	const struct bp_io_dev *y = *(const struct bp_io_dev *const *)b;
	uint64_t ox = ops_of(x->op), oy = ops_of(y->op);

	if (ox != oy)
		return ox < oy ? 1 : -1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

/* devices with IO or busy time in the window, sorted; NULL with *n = 0 when none */
static const struct bp_io_dev **active_devs(const struct bp_profile *p, uint32_t *n)
{
	const struct bp_io_dev **v;
	uint32_t i;

	*n = 0;
	if (!p->nr_io_devs)
		return NULL;
	v = malloc(p->nr_io_devs * sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < p->nr_io_devs; i++)
		if (ops_of(p->io_devs[i].op) || p->io_devs[i].busy_ns)
			v[(*n)++] = &p->io_devs[i];
	qsort(v, *n, sizeof(*v), cmp_dev_ptr);
	return v;
}

static double window_ns(const struct bp_profile *p)
{
	return p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) : 0;
}

static void json_quantiles(struct bp_json_w *w, const struct bp_io_stats *all)
{
	bp_json_w_kv_double(w, "p50_ms", ms(bp_hist_quantile(all->hist, 0.50)));
	bp_json_w_kv_double(w, "p99_ms", ms(bp_hist_quantile(all->hist, 0.99)));
}

static void json_device(struct bp_json_w *w, const struct bp_profile *p, const struct bp_io_dev *d)
{
	double win = window_ns(p);
	struct bp_io_stats all;
	char dev[24];
	uint32_t i;

	stats_total(d->op, &all);
	snprintf(dev, sizeof(dev), "%u:%u", d->dev >> 20, d->dev & 0xfffff);
	bp_json_w_begin_object(w);
	bp_json_w_kv_string(w, "device", d->name[0] ? d->name : dev);
	bp_json_w_kv_string(w, "dev", dev);
	bp_json_w_kv_uint64(w, "ops", all.ops);
	bp_json_w_kv_uint64(w, "bytes", all.bytes);
	bp_json_w_kv_uint64(w, "read_ops", d->op[BP_IO_READ].ops);
	bp_json_w_kv_uint64(w, "read_bytes", d->op[BP_IO_READ].bytes);
	bp_json_w_kv_uint64(w, "write_ops", d->op[BP_IO_WRITE].ops);
	bp_json_w_kv_uint64(w, "write_bytes", d->op[BP_IO_WRITE].bytes);
	bp_json_w_kv_uint64(w, "other_ops", d->op[BP_IO_OTHER].ops);
	bp_json_w_kv_uint64(w, "other_bytes", d->op[BP_IO_OTHER].bytes);
	bp_json_w_kv_double(w, "busy", win > 0 ? d->busy_ns / win : 0);
	/* Little's law: mean requests in flight = sum of their latencies / window */
	bp_json_w_kv_double(w, "avg_inflight", win > 0 ? all.lat_ns / win : 0);
	bp_json_w_kv_uint64(w, "max_inflight", d->max_inflight);
	json_quantiles(w, &all);
	bp_json_w_key(w, "latency_hist_us");
	bp_json_w_begin_array(w);
	for (i = 0; i < BP_HIST_SLOTS; i++) {
		if (!all.hist[i])
			continue;
		bp_json_w_begin_object(w);
		bp_json_w_kv_uint64(w, "lo", bp_hist_lo(i));
		bp_json_w_kv_uint64(w, "hi", bp_hist_hi(i));
		bp_json_w_kv_uint64(w, "count", all.hist[i]);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_end_object(w);
}

/* kernel-thread IO by thread name */
struct kt_sum {
	char comm[BP_COMM_LEN];
	uint64_t ops, bytes;
};

static int cmp_kt(const void *a, const void *b)
{
	const struct kt_sum *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->ops != y->ops)
		return x->ops < y->ops ? 1 : -1;
	return strcmp(x->comm, y->comm);
}

/* kernel-thread rows grouped by comm, sorted; *n = 0 (and NULL) when none or on -ENOMEM */
static struct kt_sum *kthread_sums(const struct bp_profile *p, uint32_t *n)
{
	struct kt_sum *v = NULL;
	uint32_t i, j;

	*n = 0;
	for (i = 0; i < p->nr_io_rows; i++) {
		const struct bp_io_row *r = &p->io_rows[i];

		if (!r->kthread)
			continue;
		for (j = 0; j < *n && strcmp(v[j].comm, r->comm); j++)
			;
		if (j == *n) {
			struct kt_sum *nv = realloc(v, (j + 1) * sizeof(*nv));

			if (!nv) {
				free(v);
				*n = 0;
				return NULL;
			}
			v = nv;
			memset(&v[j], 0, sizeof(v[j]));
			memcpy(v[j].comm, r->comm, sizeof(v[j].comm));
			(*n)++;
		}
		v[j].ops += r->st.ops;
		v[j].bytes += r->st.bytes;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_kt);
	return v;
}

void bp_export_json_devices(struct bp_json_w *w, const struct bp_profile *p)
{
	const struct bp_io_dev **devs;
	struct kt_sum *kt;
	uint64_t ops = 0, bytes = 0;
	uint32_t i, n, nkt;

	devs = active_devs(p, &n);
	bp_json_w_key(w, "devices");
	bp_json_w_begin_array(w);
	for (i = 0; i < n; i++)
		json_device(w, p, devs[i]);
	bp_json_w_end_array(w);
	free(devs);

	kt = kthread_sums(p, &nkt);
	for (i = 0; i < nkt; i++) {
		ops += kt[i].ops;
		bytes += kt[i].bytes;
	}
	bp_json_w_key(w, "io_unattributed");
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "ops", ops);
	bp_json_w_kv_uint64(w, "bytes", bytes);
	bp_json_w_key(w, "by");
	bp_json_w_begin_array(w);
	for (i = 0; i < nkt; i++) {
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "comm", kt[i].comm);
		bp_json_w_kv_uint64(w, "ops", kt[i].ops);
		bp_json_w_kv_uint64(w, "bytes", kt[i].bytes);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_end_object(w);
	free(kt);
}

void bp_export_json_proc_io(struct bp_json_w *w, const struct bp_profile *p, uint32_t pid,
			    double wait_s)
{
	struct bp_io_stats all, dall;
	struct io_sum s;
	char buf[24];
	uint32_t i;

	/* on -ENOMEM the object keeps its shape and says what could be summed */
	proc_sum(p, pid, &s);
	if (s.nr_devs > 1)
		qsort(s.devs, s.nr_devs, sizeof(*s.devs), cmp_proc_dev);
	stats_total(s.op, &all);
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "ops", all.ops);
	bp_json_w_kv_uint64(w, "bytes", all.bytes);
	bp_json_w_kv_double(w, "wait_s", wait_s);
	bp_json_w_kv_uint64(w, "read_ops", s.op[BP_IO_READ].ops);
	bp_json_w_kv_uint64(w, "read_bytes", s.op[BP_IO_READ].bytes);
	bp_json_w_kv_uint64(w, "write_ops", s.op[BP_IO_WRITE].ops);
	bp_json_w_kv_uint64(w, "write_bytes", s.op[BP_IO_WRITE].bytes);
	bp_json_w_kv_uint64(w, "other_ops", s.op[BP_IO_OTHER].ops);
	json_quantiles(w, &all);
	bp_json_w_key(w, "devices");
	bp_json_w_begin_array(w);
	for (i = 0; i < s.nr_devs; i++) {
		const struct proc_dev *d = &s.devs[i];

		stats_total(d->op, &dall);
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "device", dev_name(p, d->dev, buf, sizeof(buf)));
		bp_json_w_kv_uint64(w, "ops", dall.ops);
		bp_json_w_kv_uint64(w, "bytes", dall.bytes);
		bp_json_w_kv_uint64(w, "read_bytes", d->op[BP_IO_READ].bytes);
		bp_json_w_kv_uint64(w, "write_bytes", d->op[BP_IO_WRITE].bytes);
		json_quantiles(w, &dall);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_end_object(w);
	free(s.devs);
}

/* 1023 B, 12 KiB, 4.0 MiB: two significant digits at least */
static void fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 9.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* 0.09 ms, 12.5 ms, 140 ms */
static void fmt_ms(char *buf, size_t len, double us)
{
	double v = us / 1000.0;

	snprintf(buf, len, v < 9.995 ? "%.2f ms" : v < 99.95 ? "%.1f ms" : "%.0f ms", v);
}

static void fmt_pct(char *buf, size_t len, double frac)
{
	if (frac > 0 && frac < 0.005)
		snprintf(buf, len, "<1%%");
	else
		snprintf(buf, len, "%.0f%%", frac * 100);
}

static void text_dir(struct bp_buf *out, const struct bp_io_stats *s, const char *one,
		     const char *many, bool *first)
{
	char b[32];

	if (!s->ops)
		return;
	fmt_bytes(b, sizeof(b), s->bytes);
	bp_buf_printf(out, "%s%" PRIu64 " %s", *first ? "" : ", ", s->ops,
		      s->ops == 1 ? one : many);
	if (s->bytes)
		bp_buf_printf(out, " %s", b);
	*first = false;
}

void bp_report_text_devices(struct bp_buf *out, const struct bp_profile *p)
{
	const struct bp_io_dev **devs;
	double win = window_ns(p);
	struct bp_io_stats all;
	char p50[24], p99[24], busy[16], b[32];
	struct kt_sum *kt;
	uint64_t kops = 0, kbytes = 0;
	uint32_t i, n, nkt;
	bool first, any = false;

	if (!p->io_enabled)
		return;
	devs = active_devs(p, &n);
	for (i = 0; i < n; i++) {
		const struct bp_io_dev *d = devs[i];

		stats_total(d->op, &all);
		if (!all.ops)
			continue;
		if (!any)
			bp_buf_puts(out, "\nblock IO:\n");
		any = true;
		bp_buf_printf(out, "  %s: ", d->name);
		first = true;
		text_dir(out, &d->op[BP_IO_READ], "read", "reads", &first);
		text_dir(out, &d->op[BP_IO_WRITE], "write", "writes", &first);
		text_dir(out, &d->op[BP_IO_OTHER], "flush or discard", "flushes or discards",
			 &first);
		fmt_ms(p50, sizeof(p50), bp_hist_quantile(all.hist, 0.50));
		fmt_ms(p99, sizeof(p99), bp_hist_quantile(all.hist, 0.99));
		fmt_pct(busy, sizeof(busy), win > 0 ? d->busy_ns / win : 0);
		bp_buf_printf(out, "; p50 %s, p99 %s; busy %s, %.1f in flight\n", p50, p99, busy,
			      win > 0 ? all.lat_ns / win : 0);
	}
	free(devs);

	kt = kthread_sums(p, &nkt);
	for (i = 0; i < nkt; i++) {
		kops += kt[i].ops;
		kbytes += kt[i].bytes;
	}
	if (kops && any) {
		fmt_bytes(b, sizeof(b), kbytes);
		bp_buf_printf(out, "  kernel threads (not attributed to a process): %" PRIu64
			      " requests %s, most by", kops, b);
		for (i = 0; i < nkt && i < 3; i++) {
			fmt_bytes(b, sizeof(b), kt[i].bytes);
			bp_buf_printf(out, "%s %s (%s)", i ? "," : "", kt[i].comm, b);
		}
		bp_buf_putc(out, '\n');
	}
	free(kt);
}

/* "4 KiB reads": typical request size of the dominant direction */
static void text_proc_dev(struct bp_buf *out, const struct proc_dev *d, const char *name)
{
	const struct bp_io_stats *r = &d->op[BP_IO_READ], *w = &d->op[BP_IO_WRITE];
	const struct bp_io_stats *dom = r->ops >= w->ops ? r : w;
	struct bp_io_stats all;
	char p50[24], p99[24];
	uint64_t avg;

	stats_total(d->op, &all);
	bp_buf_printf(out, "%s: ", name);
	if (dom->ops) {
		avg = dom->bytes / dom->ops;
		if (avg >= 1024)
			bp_buf_printf(out, "%" PRIu64 " KiB", (avg + 512) / 1024);
		else
			bp_buf_printf(out, "%" PRIu64 " B", avg);
		bp_buf_puts(out, dom == r ? " reads" : " writes");
	} else {
		bp_buf_printf(out, "%" PRIu64 " flush/discard requests", all.ops);
	}
	fmt_ms(p50, sizeof(p50), bp_hist_quantile(all.hist, 0.50));
	fmt_ms(p99, sizeof(p99), bp_hist_quantile(all.hist, 0.99));
	bp_buf_printf(out, ", p50 %s, p99 %s", p50, p99);
}

size_t bp_report_text_proc_io(char *buf, size_t len, const struct bp_profile *p, uint32_t pid)
{
	struct bp_buf out = BP_BUF_INIT;
	struct io_sum s;
	char name[24];
	size_t n = 0;
	uint32_t i;

	if (len)
		buf[0] = '\0';
	if (proc_sum(p, pid, &s) || !s.nr_devs || !len)
		goto out;
	qsort(s.devs, s.nr_devs, sizeof(*s.devs), cmp_proc_dev);
	for (i = 0; i < s.nr_devs && i < 3; i++) {
		if (i)
			bp_buf_puts(&out, "; ");
		text_proc_dev(&out, &s.devs[i], dev_name(p, s.devs[i].dev, name, sizeof(name)));
	}
	if (s.nr_devs > 3)
		bp_buf_printf(&out, "; %u more devices", s.nr_devs - 3);
	if (out.err)
		goto out;
	n = out.len < len ? out.len : len - 1;
	memcpy(buf, bp_buf_str(&out), n);
	buf[n] = '\0';
out:
	bp_buf_free(&out);
	free(s.devs);
	return n;
}
