// SPDX-License-Identifier: GPL-2.0
/*
 * The line table formats follow CPython's own decoders: PyCode_Addr2Line
 * (3.6 - 3.9, Objects/codeobject.c), the PEP 626 table of 3.10
 * (Objects/lnotab_notes.txt) and the location table of 3.11+
 * (Objects/locations.md). Addresses here are in bytes, as there.
 */
#include <errno.h>
#include <string.h>

#include "model/profile.h"
#include "symbolize/python_code.h"

/* 3.6 - 3.9: (address increment, signed line increment) pairs */
static uint32_t lnotab_line(const uint8_t *t, size_t len, int32_t first, uint32_t addrq,
			    bool *cut)
{
	int64_t line = first;
	uint64_t addr = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > addrq)
			return line > 0 ? (uint32_t)line : 0;
		line += (int8_t)t[i + 1];
	}
	*cut = true;
	return line > 0 ? (uint32_t)line : 0;
}

/* 3.10: (byte delta, signed line delta) pairs, -128: no line */
static uint32_t linetable310_line(const uint8_t *t, size_t len, int32_t first, uint32_t addrq,
				  bool *cut)
{
	int64_t computed = first, line = -1;
	uint64_t start = 0, end = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		int8_t ld = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (ld == -128) {
			line = -1;
		} else {
			computed += ld;
			line = computed;
		}
		if (start <= addrq && addrq < end)
			return line > 0 ? (uint32_t)line : 0;
	}
	*cut = true;
	return 0;
}

/* 3.11+: 6-bit varints, 0x40 for "more" */
static bool varint(const uint8_t *t, size_t len, size_t *pos, uint32_t *out)
{
	uint32_t val, shift = 0;
	uint8_t b;

	if (*pos >= len)
		return false;
	b = t[(*pos)++];
	val = b & 63;
	while (b & 64) {
		if (*pos >= len || shift > 24)
			return false;
		b = t[(*pos)++];
		shift += 6;
		val |= (uint32_t)(b & 63) << shift;
	}
	*out = val;
	return true;
}

static bool svarint(const uint8_t *t, size_t len, size_t *pos, int32_t *out)
{
	uint32_t u;

	if (!varint(t, len, pos, &u))
		return false;
	*out = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return true;
}

static uint32_t locations_line(const uint8_t *t, size_t len, int32_t first, uint32_t addrq,
			       bool *cut)
{
	int64_t computed = first;
	uint64_t end = 0;
	size_t pos = 0;

	while (pos < len) {
		uint8_t b = t[pos];
		int code = (b >> 3) & 15;
		int32_t delta = 0;
		uint64_t start = end;
		size_t p = pos + 1;
		bool noline = code == 15;

		/* every entry starts with bit 7 set: anything else is not this format */
		if (!(b & 0x80))
			return 0;
		if (code == 13 || code == 14) {
			if (!svarint(t, len, &p, &delta)) {
				*cut = true;
				return 0;
			}
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
		}
		computed += delta;
		end += (uint64_t)((b & 7) + 1) * 2;
		if (start <= addrq && addrq < end)
			return !noline && computed > 0 ? (uint32_t)computed : 0;
		/* the next entry is the next byte with bit 7 set */
		pos++;
		while (pos < len && !(t[pos] & 0x80))
			pos++;
	}
	*cut = true;
	return 0;
}

uint32_t bp_py_line(unsigned int minor, const uint8_t *table, size_t len, int32_t firstlineno,
		    uint32_t idx, bool *cut)
{
	uint32_t addr = idx * 2;
	bool dummy;

	if (!cut)
		cut = &dummy;
	*cut = false;
	if (!table)
		len = 0;
	if (minor <= 9)
		return lnotab_line(table, len, firstlineno, addr, cut);
	if (minor == 10)
		return linetable310_line(table, len, firstlineno, addr, cut);
	return locations_line(table, len, firstlineno, addr, cut);
}

/* one code point as UTF-8; surrogates and out-of-range values become '?' */
static size_t put_utf8(uint32_t c, char *out, size_t room)
{
	if (c < 0x20 || c == 0x7f || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		c = '?';
	if (c < 0x80) {
		if (room < 1)
			return 0;
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		if (room < 2)
			return 0;
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		if (room < 3)
			return 0;
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (room < 4)
		return 0;
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

int bp_py_text(const struct bp_py_str *s, const uint8_t *raw, size_t raw_len, char *out,
	       size_t out_len)
{
	size_t n, i, o = 0, w;

	if (!out_len)
		return -EINVAL;
	out[0] = '\0';
	if ((s->flags & BP_PY_STR_ERR) || (s->kind != 1 && s->kind != 2 && s->kind != 4))
		return -EINVAL;
	n = s->copied;
	if (n > raw_len || n % s->kind || n / s->kind > s->len)
		return -EINVAL;
	for (i = 0; i < n; i += s->kind) {
		uint32_t c;

		if (s->kind == 1) {
			c = raw[i];
			if ((s->flags & BP_PY_STR_ASCII) && c >= 0x80)
				return -EINVAL;
		} else if (s->kind == 2) {
			uint16_t v;

			memcpy(&v, raw + i, 2);
			c = v;
		} else {
			memcpy(&c, raw + i, 4);
		}
		w = put_utf8(c, out + o, out_len - 1 - o);
		if (!w)
			break;
		o += w;
	}
	out[o] = '\0';
	return n / s->kind < s->len || i < n ? -E2BIG : (int)o;
}

static bool is_eval(const struct bp_frame *f, const char *module)
{
	return f->name && !f->kernel && !f->python && !strcmp(f->module, module) &&
	       (!strcmp(f->name, "_PyEval_EvalFrameDefault") ||
		!strcmp(f->name, "_PyEval_EvalFrameDefault.cold"));
}

uint32_t bp_py_merge(const struct bp_profile *prof, const char *module, const uint32_t *nat,
		     uint32_t nn, const uint32_t *ids, const bool *ends, uint32_t nr,
		     uint32_t *out, uint32_t max)
{
	uint32_t run_start[BP_MAX_STACK_DEPTH + 1], nruns = 0, i, j, n = 0, evals = 0, matched, r;

	if (nr > BP_MAX_STACK_DEPTH)
		nr = BP_MAX_STACK_DEPTH;
	if (!module || !nr) {
		if (nn > max)
			nn = max;
		memcpy(out, nat, nn * sizeof(*out));
		return nn;
	}
	/* run r is ids[run_start[r] .. run_start[r + 1]), innermost first */
	for (i = 0; i < nr; i++)
		if (i == 0 || ends[i - 1])
			run_start[nruns++] = i;
	run_start[nruns] = nr;
	for (i = 0; i < nn; i++)
		evals += is_eval(&prof->frames[nat[i]], module);
	matched = evals < nruns ? evals : nruns;

	/* runs the native walk did not reach (no frame pointers under them): at the root */
	for (r = nruns; r-- > matched;)
		for (j = run_start[r + 1]; j-- > run_start[r] && n < max;)
			out[n++] = ids[j];
	/*
	 * The loop frames, outermost first: the outer ones beyond the runs stay
	 * native, each inner one takes its run, outermost run first.
	 */
	r = matched;
	for (i = 0; i < nn && n < max; i++) {
		if (is_eval(&prof->frames[nat[i]], module) && evals-- <= matched && r) {
			r--;
			for (j = run_start[r + 1]; j-- > run_start[r] && n < max;)
				out[n++] = ids[j];
			continue;
		}
		out[n++] = nat[i];
	}
	return n;
}
