/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers as text for machines (JSON, Prometheus): always '.', whatever
 * LC_NUMERIC says. printf and strtod follow the locale, and a program
 * embedding the agent may have called setlocale(LC_ALL, "") in a locale
 * that writes "0,5".
 */
#ifndef BP_NUMFMT_H
#define BP_NUMFMT_H

#include <locale.h>
#include <stddef.h>
#include <stdint.h>

/* room for any double bp_num_double() writes, NUL included */
#define BP_NUM_DOUBLE_MAX	32

enum bp_num_style {
	/* always reads as a float (5.0, 1e+20); NaN and Inf: null */
	BP_NUM_JSON,
	/* integral values as integers (1000000, 0 for -0); NaN, +Inf, -Inf */
	BP_NUM_PROM,
};

/*
 * The shortest of %.15g, %.16g and %.17g that reads back bit-exact, in the
 * style's spelling. out holds size bytes (BP_NUM_DOUBLE_MAX is enough);
 * returns the length written.
 */
int bp_num_double(char *out, size_t size, double v, enum bp_num_style style);

/* room for any integer bp_num_int64()/bp_num_uint64() write, NUL included */
#define BP_NUM_INT_MAX	21

/*
 * v in decimal into out (BP_NUM_INT_MAX bytes), as "%" PRIu64 / PRId64
 * print it, without printf's format parsing (tens of thousands of numbers
 * a window). Returns the length written.
 */
int bp_num_uint64(char *out, uint64_t v);
int bp_num_int64(char *out, int64_t v);

/* strtod() in the C locale */
double bp_num_strtod(const char *s, char **end);

/*
 * The "C" locale object, made once; (locale_t)0 when even that cannot be
 * had, and then callers use the global locale (right in all but a few).
 */
locale_t bp_num_c_locale(void);

#endif /* BP_NUMFMT_H */
