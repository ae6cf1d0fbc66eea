// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/groups.h"
#include "analyze/owned.h"
#include "cli.h"
#include "collect/loader.h"
#include "collect/unwind.h"
#include "options.h"
#include "proc/cgroup.h"
#include "serve/httpd.h"

static int bad_value(const char *what, const char *opt, const char *arg, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad_value(const char *what, const char *opt, const char *arg, const char *fmt, ...)
{
	char expected[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(expected, sizeof(expected), fmt, ap);
	va_end(ap);
	cli_error("invalid %s %s '%s': give %s", what, opt, arg, expected);
	return -EINVAL;
}

/* a whole decimal number, nothing before or after it */
static int parse_double(const char *s, double *out)
{
	char *end;

	if (!*s || strchr(" \t\n", *s))
		return -EINVAL;
	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*out) ? -EINVAL : 0;
}

int cli_opt_freq(const char *opt, const char *arg, int *hz)
{
	int max = bp_max_sample_rate();
	double v;

	if (parse_double(arg, &v) || v != floor(v) || v < 1 || v > max)
		return bad_value("frequency", opt, arg,
				 "a whole number of Hz from 1 to %d (kernel.perf_event_max_sample_rate)",
				 max);
	*hz = (int)v;
	return 0;
}

int cli_opt_seconds(const char *what, const char *opt, const char *arg, double min, double max,
		    double *out)
{
	double v;

	if (parse_double(arg, &v) || v < min || v > max || (min == 0 && v == 0))
		return min == 0 ? bad_value(what, opt, arg, "seconds, more than 0 and at most %.10g", max)
				: bad_value(what, opt, arg, "seconds from %.10g to %.10g", min, max);
	*out = v;
	return 0;
}

int cli_opt_count(const char *opt, const char *arg, long min, long max, const char *unit,
		  long *out)
{
	char *end;
	long v;

	errno = 0;
	v = *arg >= '0' && *arg <= '9' ? strtol(arg, &end, 10) : (end = (char *)arg, 0);
	if (errno || end == arg || *end || v < min || v > max)
		return bad_value("count", opt, arg, "a whole number of %s from %ld to %ld", unit, min,
				 max);
	*out = v;
	return 0;
}

int cli_opt_percent(const char *opt, const char *arg, double max, double *out)
{
	double v;

	if (parse_double(arg, &v) || v < 0 || v > max)
		return bad_value("percentage", opt, arg, "a number from 0 to %.10g", max);
	*out = v;
	return 0;
}

int cli_opt_counts(const char *opt, const char *arg, long min, long max, const char *unit,
		   long *out, int max_n, int *n)
{
	const char *p = arg;
	char *end;
	long v;

	*n = 0;
	for (;;) {
		errno = 0;
		v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : (end = (char *)p, 0);
		if (errno || end == p || (*end && *end != ',') || v < min || v > max ||
		    *n == max_n)
			return bad_value("list", opt, arg, "whole numbers of %s from %ld to %ld, "
					 "separated by commas (at most %d)", unit, min, max, max_n);
		out[(*n)++] = v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

int cli_opt_size(const char *opt, const char *arg, uint64_t *out)
{
	double v;
	char *end;

	errno = 0;
	v = *arg >= '0' && *arg <= '9' ? strtod(arg, &end) : (end = (char *)arg, 0);
	if (errno || end == arg || v < 0 || !isfinite(v))
		goto bad;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > 1e18)
		goto bad;
	*out = (uint64_t)v;
	return 0;
bad:
	return bad_value("size", opt, arg, "bytes with an optional K, M or G suffix, such as 500M");
}

int cli_opt_unwind_mem(const char *opt, const char *arg, bool *off, uint64_t *bytes)
{
	uint64_t v;

	if (cli_opt_size(opt, arg, &v))
		return -EINVAL;
	if (v && (v < BP_UNWIND_MEM_MIN || v > BP_UNWIND_MEM_MAX))
		return bad_value("size", opt, arg, "0 (frame pointers only) or 64K to 2G");
	*off = !v;
	*bytes = v;
	return 0;
}

int cli_opt_pids(const char *opt, const char *arg, pid_t **pids, int *nr)
{
	char *copy = strdup(arg), *tok, *save = NULL, *end;
	int err = 0, before = *nr;
	pid_t *n;
	long v;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		v = *tok >= '0' && *tok <= '9' ? strtol(tok, &end, 10) : (end = tok, 0);
		if (errno || end == tok || *end || v <= 0 || v > INT_MAX) {
			err = -EINVAL;
			break;
		}
		n = realloc(*pids, (*nr + 1) * sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			break;
		}
		*pids = n;
		(*pids)[(*nr)++] = v;
	}
	free(copy);
	if (err == -ENOMEM)
		cli_error("out of memory");
	else if (err || *nr == before)
		err = bad_value("pid list", opt, arg, "process ids separated by commas, such as 1234,5678");
	return err;
}

int cli_opt_listen(const char *opt, const char *arg, const char **out)
{
	if (!strcmp(arg, "off")) {
		*out = NULL;
		return 0;
	}
	if (bp_httpd_check_listen(arg))
		return bad_value("address", opt, arg,
				 "a numeric ADDR:PORT such as 127.0.0.1:9741 or [::1]:9741, :PORT "
				 "(every interface), or off");
	*out = arg;
	return 0;
}

int cli_opt_group_by(const char *opt, const char *arg, enum bp_group_by *by)
{
	if (bp_group_by_parse(arg, by))
		return bad_value("grouping", opt, arg, "user, cgroup or unit");
	return 0;
}

int cli_opt_cgroup(const char *opt, const char *arg, struct bp_cg_target *t)
{
	struct bp_cg_mounts m;
	char why[512];
	int err;

	if (bp_cg_mounts_read(NULL, &m)) {
		cli_error("invalid cgroup %s '%s': this machine has no cgroup mount", opt, arg);
		return -EINVAL;
	}
	err = bp_cg_resolve(&m, NULL, arg, t, why, sizeof(why));
	if (err == -EINVAL)
		return bad_value("cgroup", opt, arg, "a cgroup's directory (%s/...), its path as "
				 "/proc/PID/cgroup shows it, or a unit name (nginx.service, "
				 "docker:ID)", m.v2.dir[0] ? m.v2.dir : "/sys/fs/cgroup");
	if (err) {
		cli_error("invalid cgroup %s '%s': %s", opt, arg, why);
		return -EINVAL;
	}
	return 0;
}

int cli_opt_own(const char *opt, const char *arg)
{
	int err = bp_own_add(arg);

	if (err == -ENOSPC) {
		cli_error("too many %s: at most %d modules", opt, BP_OWN_MAX);
		return -EINVAL;
	}
	if (err)
		return bad_value("module", opt, arg,
				 "a module's file name as the report shows it (libfoo.so.1), no '/'");
	return 0;
}
