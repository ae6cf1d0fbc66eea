// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/procinfo.h"
#include "util/readfile.h"

uint64_t bp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t bp_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int bp_procinfo_parse_stat(const char *text, char *comm, size_t comm_len, uint32_t *ppid,
			   uint64_t *start_ticks)
{
	/* comm may contain spaces and parentheses: it ends at the last ')' */
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	unsigned long long st;
	unsigned int pp;
	size_t n;

	if (!open || !close || close < open)
		return -EINVAL;
	n = close - open - 1;
	if (n >= comm_len)
		n = comm_len - 1;
	memcpy(comm, open + 1, n);
	comm[n] = '\0';
	/* fields after comm: state(3) ppid(4) ... starttime(22) */
	if (sscanf(close + 1, " %*c %u %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			      "%*d %*d %*d %*d %llu", &pp, &st) != 2)
		return -EINVAL;
	*ppid = pp;
	*start_ticks = st;
	return 0;
}

int bp_procinfo_read(const char *proc_root, pid_t pid, struct bp_procinfo *out)
{
	char path[128], buf[4096];
	uint64_t ticks, start_boot, now_boot, now_mono;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n, i;
	int err;

	memset(out, 0, sizeof(*out));
	if (!proc_root)
		proc_root = "/proc";
	snprintf(path, sizeof(path), "%s/%d/stat", proc_root, pid);
	n = bp_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	err = bp_procinfo_parse_stat(buf, out->comm, sizeof(out->comm), &out->ppid, &ticks);
	if (err)
		return err;
	if (hz <= 0)
		hz = 100;
	/* starttime counts from boot (CLOCK_BOOTTIME); move it to CLOCK_MONOTONIC */
	now_mono = bp_now_ns();
	now_boot = boottime_ns();
	start_boot = ticks * (1000000000ULL / hz);
	out->start_ns = start_boot > now_boot - now_mono ? start_boot - (now_boot - now_mono) : 0;

	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, pid);
	n = bp_read_small(path, buf, sizeof(buf));
	if (n > 0) {
		while (n > 0 && buf[n - 1] == '\0')
			n--;
		for (i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		if (n > 0)
			out->cmdline = strdup(buf);
	}
	return 0;
}

/*
 * The numbers on the line "key\t1\t2..." of a status file: how many (at most
 * max are stored; the rest are read and dropped), -ENOENT without the line,
 * -EINVAL when it holds something else.
 */
static int status_numbers(const char *text, const char *key, unsigned long long *v, int max)
{
	size_t klen = strlen(key);
	const char *p = text;
	int n = 0;

	while (strncmp(p, key, klen)) {
		p = strchr(p, '\n');
		if (!p)
			return -ENOENT;
		p++;
	}
	for (p += klen;;) {
		unsigned long long x = 0;
		int digits = 0;

		p += strspn(p, " \t");
		if (!*p || *p == '\n')
			return n;
		while (*p >= '0' && *p <= '9') {
			if (++digits > 19)
				return -EINVAL;
			x = x * 10 + (unsigned long long)(*p - '0');
			p++;
		}
		if (!digits || (*p && *p != ' ' && *p != '\t' && *p != '\n'))
			return -EINVAL;
		if (n < max)
			v[n] = x;
		n++;
	}
}

int bp_procinfo_parse_status(const char *text, uid_t *euid, pid_t *nspid)
{
	/* pid namespaces nest at most 32 deep */
	unsigned long long v[33];
	int n;

	/* Uid: real effective saved fs */
	n = status_numbers(text, "Uid:", v, 4);
	if (n < 2 || v[1] >= UINT32_MAX)
		return -EINVAL;
	*euid = (uid_t)v[1];
	n = status_numbers(text, "NSpid:", v, 33);
	if (n > 0 && n <= 33 && v[n - 1] && v[n - 1] <= INT32_MAX)
		*nspid = (pid_t)v[n - 1];
	return 0;
}

int bp_procinfo_read_ids(const char *proc_root, pid_t pid, uid_t *euid, pid_t *nspid)
{
	char path[128], buf[8192];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root ? proc_root : "/proc", pid);
	/* Uid: and NSpid: come in the first dozen lines, long before 8 KiB */
	n = bp_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	*nspid = pid;
	return bp_procinfo_parse_status(buf, euid, nspid);
}

void bp_procinfo_free(struct bp_procinfo *pi)
{
	free(pi->cmdline);
	pi->cmdline = NULL;
}

int bp_cpu_times(const char *proc_root, uint64_t *busy, uint64_t *total)
{
	unsigned long long v[10] = {};
	char path[128], buf[1024];
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "%s/stat", proc_root ? proc_root : "/proc");
	n = bp_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	/* cpu  user nice system idle iowait irq softirq steal guest guest_nice */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) < 8)
		return -EINVAL;
	*total = 0;
	/* guest time is already inside user time */
	for (i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];
	return 0;
}
