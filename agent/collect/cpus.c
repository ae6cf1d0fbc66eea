// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/cpus.h"

#define MAX_CPUS 8192

int bp_parse_cpu_list(const char *s, int **out)
{
	int *cpus = NULL, n = 0, cap = 0;
	const char *p = s;

	*out = NULL;
	while (*p && *p != '\n') {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*p))
			goto bad;
		a = strtol(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto bad;
			b = strtol(p, &end, 10);
			p = end;
		}
		if (a < 0 || b < a || b >= MAX_CPUS)
			goto bad;
		for (; a <= b; a++) {
			if (n == cap) {
				int *t;

				cap = cap ? cap * 2 : 16;
				t = realloc(cpus, cap * sizeof(*cpus));
				if (!t) {
					free(cpus);
					return -ENOMEM;
				}
				cpus = t;
			}
			cpus[n++] = a;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto bad;
	}
	if (!n)
		goto bad;
	*out = cpus;
	return n;
bad:
	free(cpus);
	return -EINVAL;
}

int bp_online_cpus(int **out)
{
	char buf[4096];
	FILE *f;
	int err;

	*out = NULL;
	f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f) {
		/* no sysfs: assume CPUs 0..n-1 */
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		if (n <= 0)
			return -errno;
		snprintf(buf, sizeof(buf), "0-%ld", n - 1);
		return bp_parse_cpu_list(buf, out);
	}
	if (!fgets(buf, sizeof(buf), f)) {
		err = ferror(f) ? -EIO : -EINVAL;
		fclose(f);
		return err;
	}
	fclose(f);
	return bp_parse_cpu_list(buf, out);
}

int bp_online_cpus_count(void)
{
	int *cpus, n = bp_online_cpus(&cpus);

	free(cpus);
	return n > 0 ? n : 1;
}

int bp_online_cpu_first(void)
{
	int *cpus, n = bp_online_cpus(&cpus), first;

	first = n > 0 ? cpus[0] : -1;
	free(cpus);
	return first;
}
