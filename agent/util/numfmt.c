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
 *
 * Only the largest k that keeps m below 10^15 is tried: if a smaller k
 * works, m there is that k's m times a power of ten (|v| * 10^k is within
 * 0.2 of it), so it works too, and its trailing zeros give the first k
 * back. Trying each k from 1 took 16 multiplications, roundings and
 * divisions for every number that needs 16 digits or more, a window's
 * shares most of all.
 */
static int fixed_short(char *out, size_t size, double v)
{
	double a = fabs(v), m = 0;
	char dig[BP_NUM_INT_MAX];
	int k, nd, n = 0, i;
	uint64_t mi;

	if (!(a >= 1e-4 && a < 1e15) || size < 24)
		return 0;
	/* 15 - floor(log10 a), one more than the 15 digits allow: log10 may round up */
	k = 15 - (int)floor(log10(a));
	if (k > 19)
		k = 19;
	for (; k >= 1; k--) {
		m = nearbyint(a * pow10_exact[k]);
		if (m < 1e15)
			break;
	}
	if (k < 1 || m / pow10_exact[k] != a)
		return -1;
	for (mi = (uint64_t)m; k > 1 && !(mi % 10); k--)
		mi /= 10;
	m = (double)mi;
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

/* 10^0 .. 10^20 */
static const unsigned __int128 pow10_u128[] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
	(unsigned __int128)10000000000000000000ULL * 10,
};

/*
 * What "%.{p}g" prints for a = M / 2^k (M of 53 bits, 3 <= k <= 66, so
 * that 1e-4 <= a < 1e15), p 16 or 17, if it reads back as a; 0 if not (p
 * 16 only: 17 digits always read back). The digits come exact from
 * integers: a * 10^s below 2^120, rounded to nearest, ties to even, as
 * glibc's printf rounds; the read-back is strtod's rule (the nearest
 * double, ties to the even mantissa) checked on the same integers. The
 * shares and ratios of a window (0.7477295660948536) took printf at 16
 * and 17 digits and strtod after each: a tenth of a window's close.
 */
static int long_digits(char *out, double v, uint64_t M, int k, int p)
{
	unsigned __int128 N, q, r, half, d, a4, gap;
	uint64_t q64;
	int e10 = (int)floor(log10(fabs(v))), s, nd, n = 0, i, tries;
	char dig[24];

	for (tries = 0;; tries++) {
		s = p - 1 - e10;
		if (tries > 2 || s < 0 || s > 20)
			return -1;
		N = (unsigned __int128)M * pow10_u128[s];
		q = N >> k;
		if (q < pow10_u128[p - 1])
			e10--;
		else if (q >= pow10_u128[p])
			e10++;
		else
			break;
	}
	r = N & ((((unsigned __int128)1) << k) - 1);
	half = ((unsigned __int128)1) << (k - 1);
	if (r > half || (r == half && (q & 1)))
		q++;
	if (p == 16) {
		/* |q / 10^s - a| against half the gap to each neighbour, all times 10^s 2^(k+2) */
		d = q << (k + 2);
		a4 = ((unsigned __int128)M * pow10_u128[s]) << 2;
		if (d >= a4) {
			gap = pow10_u128[s] << 1;
			d -= a4;
		} else {
			/* below a power of two the next double down is half as far */
			gap = M == (1ULL << 52) ? pow10_u128[s] : pow10_u128[s] << 1;
			d = a4 - d;
		}
		if (d > gap || (d == gap && (M & 1)))
			return 0;
	}
	if (q == pow10_u128[p]) {
		q /= 10;
		s--;
	}
	/* below 10^17: the digits from a 64-bit integer (128-bit division is a call each) */
	for (q64 = (uint64_t)q, nd = 0; q64; q64 /= 10)
		dig[nd++] = (char)('0' + (int)(q64 % 10));
	/* nd == p: digits in dig[] lowest first; p - s of them before the point */
	if (v < 0)
		out[n++] = '-';
	if (p - s > 0) {
		for (i = 0; i < p - s; i++)
			out[n++] = dig[nd - 1 - i];
	} else {
		out[n++] = '0';
	}
	out[n++] = '.';
	for (i = p - s; i < 0; i++)
		out[n++] = '0';
	for (i = p - s > 0 ? p - s : 0; i < p; i++)
		out[n++] = dig[nd - 1 - i];
	/* %g drops trailing zeros, and a point with nothing after it */
	while (out[n - 1] == '0')
		n--;
	if (out[n - 1] == '.')
		n--;
	out[n] = '\0';
	return n;
}

/* a (1e-4 <= |v| < 1e15) that needs 16 or 17 digits, as printf would spell it; <= 0: not done */
static int long_short(char *out, size_t size, double v)
{
	int e2, n;
	double m = frexp(fabs(v), &e2);
	uint64_t M = (uint64_t)ldexp(m, 53);
	int k = 53 - e2;

	if (size < 24 || k < 3 || k > 66 || M < (1ULL << 52))
		return 0;
	n = long_digits(out, v, M, k, 16);
	if (!n)
		n = long_digits(out, v, M, k, 17);
	return n > 0 ? n : 0;
}

/* v finite */
static int shortest(char *out, size_t size, double v)
{
	locale_t loc, old = (locale_t)0;
	int prec, n = 0;

	n = fixed_short(out, size, v);
	if (n > 0)
		return n;
	if (n < 0) {
		n = long_short(out, size, v);
		if (n > 0)
			return n;
		n = -1;
	}
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
