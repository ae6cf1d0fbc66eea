/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hex digits and numbers, for every text format that carries them (maps,
 * kallsyms, perf maps, build-ids): one place that refuses overflow.
 */
#ifndef BP_HEX_H
#define BP_HEX_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* the value of one hex digit, or -1 */
static inline int bp_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The hex number at *pp, no sign, no "0x", no blanks (callers that allow a
 * prefix skip it): *pp moves past the digits. Leading zeros are fine; a value
 * past 64 bits or no digit at all is -EINVAL, and *pp stays.
 */
static inline int bp_parse_hex(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d, n = 0;

	while ((d = bp_hexval(*p)) >= 0) {
		if (v >> 60)
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
		p++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

/* n bytes as 2n lowercase hex digits and a NUL (out holds 2n + 1) */
static inline void bp_hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

#endif /* BP_HEX_H */
