/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UTF-8 well-formedness, for the writers whose formats demand it (JSON,
 * Prometheus text, pprof's state blob): comms and command lines are bytes.
 */
#ifndef BP_UTF8_H
#define BP_UTF8_H

#include <stddef.h>

/*
 * Length (1..4) of the well-formed UTF-8 sequence at s, of at most n bytes,
 * or 0 when it is ill-formed; then *bad (if not NULL) is the length of its
 * maximal subpart, the bytes one U+FFFD stands for (Unicode ch. 3, "U+FFFD
 * Substitution of Maximal Subparts"). Overlongs, surrogates and code points
 * past U+10FFFF are ill-formed. In a NUL-terminated string n may be
 * SIZE_MAX: the terminator fails the continuation check.
 */
static inline size_t bp_utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else {
		if (bad)
			*bad = 1;
		return 0;
	}
	for (i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			if (bad)
				*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

#endif /* BP_UTF8_H */
