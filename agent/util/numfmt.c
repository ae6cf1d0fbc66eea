// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/numfmt.h"

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t bp_num_c_locale(void)
{
	pthread_once(&c_locale_once, c_locale_init);
	return c_locale;
}

double bp_num_strtod(const char *s, char **end)
{
	locale_t loc = bp_num_c_locale();

	return loc ? strtod_l(s, end, loc) : strtod(s, end);
}

/* v finite */
static int shortest(char *out, size_t size, double v)
{
	locale_t loc = bp_num_c_locale(), old = (locale_t)0;
	int prec, n = 0;

	if (loc)
		old = uselocale(loc);
	/*
	 * %.17g always reads back exactly but prints 0.1 as 0.10000000000000001;
	 * the first precision that reads back is the shortest of the three.
	 */
	for (prec = 15; prec <= 17; prec++) {
		n = snprintf(out, size, "%.*g", prec, v);
		if (prec == 17 || strtod(out, NULL) == v)
			break;
	}
	if (loc)
		uselocale(old);
	return n;
}

int bp_num_double(char *out, size_t size, double v, enum bp_num_style style)
{
	int n;

	if (style == BP_NUM_PROM) {
		if (isnan(v))
			return snprintf(out, size, "NaN");
		if (isinf(v))
			return snprintf(out, size, v > 0 ? "+Inf" : "-Inf");
		if (v == 0)
			return snprintf(out, size, "0");	/* not "-0" */
		/* integral values print as integers: 1000000, not 1e+06 */
		if (v == trunc(v) && fabs(v) < 0x1p63)
			return snprintf(out, size, "%" PRId64, (int64_t)v);
		return shortest(out, size, v);
	}
	if (!isfinite(v))
		return snprintf(out, size, "null");
	/*
	 * Whole numbers below 10^15 are what %.15g prints them as, without
	 * the float formatting and read-back (a third of a window's numbers;
	 * the agent writes tens of thousands a window).
	 */
	if (v == trunc(v) && fabs(v) < 1e15)
		return snprintf(out, size, "%s%" PRId64 ".0", v == 0 && signbit(v) ? "-" : "",
				(int64_t)v);
	n = shortest(out, size, v);
	/* 5.0 must stay a float for readers that type numbers by their look */
	if (!strpbrk(out, ".e") && (size_t)n + 2 < size) {
		out[n++] = '.';
		out[n++] = '0';
		out[n] = '\0';
	}
	return n;
}
