/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One parser per kind of option value, shared by every command, so that a
 * value means the same everywhere and a bad one gets the same line:
 *
 *   boundprof: invalid WHAT OPTION 'VALUE': give EXPECTED
 *
 * Each returns 0, or prints that line and returns -EINVAL (the command then
 * exits 2).
 */
#ifndef BP_CLI_OPTIONS_H
#define BP_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * -F HZ: a whole number of Hz from 1 to kernel.perf_event_max_sample_rate.
 * Any decimal spelling of a whole number is that number ("99", "99.0",
 * "1e2"); a fraction ("99.5") is refused.
 */
int cli_opt_freq(const char *opt, const char *arg, int *hz);

/* seconds, a decimal number from min to max; what: "duration", "interval" */
int cli_opt_seconds(const char *what, const char *opt, const char *arg, double min, double max,
		    double *out);

/* a whole number from min to max; unit names what is counted ("windows") */
int cli_opt_count(const char *opt, const char *arg, long min, long max, const char *unit,
		  long *out);

/* a percentage from 0 to max, a decimal number without the % */
int cli_opt_percent(const char *opt, const char *arg, double max, double *out);

/* N[,N...]: whole numbers from min to max, at most max_n of them, into out[0..*n) */
int cli_opt_counts(const char *opt, const char *arg, long min, long max, const char *unit,
		   long *out, int max_n, int *n);

/* a size in bytes: a number with an optional K, M or G (powers of 1024) and an optional B */
int cli_opt_size(const char *opt, const char *arg, uint64_t *out);

/*
 * --unwind-mem SIZE: the native unwind tables' memory budget, a size from
 * 64K to 2G, or 0 (*off: user stacks by frame pointers only)
 */
int cli_opt_unwind_mem(const char *opt, const char *arg, bool *off, uint64_t *bytes);

/* PID[,PID...], appended to *pids (realloc()ed) */
int cli_opt_pids(const char *opt, const char *arg, pid_t **pids, int *nr);

/* a numeric listen address (serve/httpd.h) or "off" (*out = NULL) */
int cli_opt_listen(const char *opt, const char *arg, const char **out);

enum bp_group_by;
struct bp_cg_target;

/* a grouping: user, cgroup or unit */
int cli_opt_group_by(const char *opt, const char *arg, enum bp_group_by *by);

/*
 * A cgroup: a directory under a cgroup mount, a path as /proc/PID/cgroup
 * shows it, or a unit name; resolved now (proc/cgroup.h bp_cg_resolve()).
 */
int cli_opt_cgroup(const char *opt, const char *arg, struct bp_cg_target *t);

/*
 * --own MODULE: a module whose code the user owns, though the table of
 * building blocks (analyze/owned.h) lists it: a file name, no '/'
 */
int cli_opt_own(const char *opt, const char *arg);

#endif /* BP_CLI_OPTIONS_H */
