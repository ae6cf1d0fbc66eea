/* SPDX-License-Identifier: GPL-2.0 */
/* CPU lists as the kernel prints them ("0-3,8,10-11"). */
#ifndef BP_CPUS_H
#define BP_CPUS_H

/* parse a CPU list; *out is malloc()ed. Count, or -EINVAL on a bad list. */
int bp_parse_cpu_list(const char *s, int **out);

/* the online CPUs; *out is malloc()ed. Count or -errno. */
int bp_online_cpus(int **out);
int bp_online_cpus_count(void);
int bp_online_cpu_first(void);

#endif /* BP_CPUS_H */
