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

int bp_num_uint64(char *out, uint64_t v)
{
	char tmp[BP_NUM_INT_MAX];
	int n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
	return n;
}

int bp_num_int64(char *out, int64_t v)
{
	if (v >= 0)
		return bp_num_uint64(out, (uint64_t)v);
	out[0] = '-';
	/* INT64_MIN has no positive twin: its magnitude is taken unsigned */
	return 1 + bp_num_uint64(out + 1, -(uint64_t)v);
}

/* 10^0 .. 10^19, each exact in a double (10^22 is the last that is) */
static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
};

/*
 * What "%.15g" prints for a v with a fraction, 1e-4 <= |v| < 1e15, when
 * that reads back as v; 0 when v is out of that range (the printf path
 * below decides then). Most of a window's numbers are such:
 * seconds from nanoseconds (0.013979402), shares. printf's float
 * formatting, its read-back and the locale switches were a fifth of the
 * agent's JSON and pprof writing.
 *
 * The first k for which m = round(|v| * 10^k) has m / 10^k == |v| exactly:
 * both are exact doubles and the division is correctly rounded, as strtod
 * is, so m * 10^-k is a decimal that reads back as v. With m below 10^15
 * (15 digits at most), %.15g of v is that decimal: v is within 2^-53 of
 * it, less than half a unit of its 15th digit, and %g drops the trailing
 * zeros a smaller k would have had. In that range %g writes no exponent.
 * -1 when v is in the range but needs 16 or 17 digits: %.15g cannot read
 * back then (it would have been such a decimal), and printf starts at 16.
 */
static int fixed_short(char *out, size_t size, double v)
{
	double a = fabs(v), m = 0;
	char dig[BP_NUM_INT_MAX];
	int k, nd, n = 0, i;

	if (!(a >= 1e-4 && a < 1e15) || size < 24)
		return 0;
	for (k = 1; k < (int)(sizeof(pow10_exact) / sizeof(pow10_exact[0])); k++) {
		m = nearbyint(a * pow10_exact[k]);
		if (m >= 1e15)
			return -1;
		if (m / pow10_exact[k] == a)
			break;
	}
	if (k == (int)(sizeof(pow10_exact) / sizeof(pow10_exact[0])))
		return -1;
	nd = bp_num_uint64(dig, (uint64_t)m);
	if (v < 0)
		out[n++] = '-';
	if (nd > k) {
		memcpy(out + n, dig, nd - k);
		n += nd - k;
	} else {
		out[n++] = '0';
	}
	out[n++] = '.';
	for (i = nd; i < k; i++)
		out[n++] = '0';
	memcpy(out + n, nd > k ? dig + nd - k : dig, nd > k ? k : nd);
	n += nd > k ? k : nd;
	out[n] = '\0';
	return n;
}

/* v finite */
static int shortest(char *out, size_t size, double v)
{
	locale_t loc, old = (locale_t)0;
	int prec, n = 0;

	n = fixed_short(out, size, v);
	if (n > 0)
		return n;
	loc = bp_num_c_locale();
	if (loc)
		old = uselocale(loc);
	/*
	 * %.17g always reads back exactly but prints 0.1 as 0.10000000000000001;
	 * the first precision that reads back is the shortest of the three.
	 */
	for (prec = n < 0 ? 16 : 15; prec <= 17; prec++) {
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
		if (v == trunc(v) && fabs(v) < 0x1p63 && size >= BP_NUM_INT_MAX)
			return bp_num_int64(out, (int64_t)v);
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
	if (v == trunc(v) && fabs(v) < 1e15 && size >= BP_NUM_INT_MAX + 3) {
		n = 0;
		if (v == 0 && signbit(v))
			out[n++] = '-';
		n += bp_num_int64(out + n, (int64_t)v);
		out[n++] = '.';
		out[n++] = '0';
		out[n] = '\0';
		return n;
	}
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
