// SPDX-License-Identifier: GPL-2.0
/*
 * The local socket protocol: parsing and formatting only. Every byte comes
 * from an unprivileged client, so nothing here trusts a length, a number
 * or an encoding it has not checked. See ipc.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/ipc.h"

static const char *const verbs[] = {
	[BP_IPC_RECORD] = "record",
	[BP_IPC_TOP] = "top",
	[BP_IPC_DUMP] = "dump",
	[BP_IPC_STOP] = "stop",
};

const char *bp_ipc_verb_name(enum bp_ipc_verb v)
{
	if ((unsigned int)v < sizeof(verbs) / sizeof(verbs[0]) && verbs[v])
		return verbs[v];
	return "?";
}

long bp_ipc_line(const char *buf, size_t len)
{
	size_t n = len < BP_IPC_MAX_LINE ? len : BP_IPC_MAX_LINE;
	const char *nl = memchr(buf, '\n', n);

	if (nl)
		return nl - buf + 1;
	return len >= BP_IPC_MAX_LINE ? -EMSGSIZE : 0;
}

/* a whole number from 0 to max, digits only; 0 or -EINVAL */
static int parse_u32(const char *s, size_t n, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n || n > 10)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* percent-decode s[0..n) into out (size bytes); no NUL, no control characters */
static int decode(const char *s, size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return -EINVAL;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = hi << 4 | lo;
			i += 2;
		}
		if (c < 0x20 || c == 0x7f)
			return -EINVAL;
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

static int parse_pids(const char *s, size_t n, struct bp_ipc_req *r)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != ',')
			j++;
		if (r->nr_pids == BP_IPC_MAX_PIDS)
			return -E2BIG;
		if (parse_u32(s + i, j - i, INT32_MAX, &r->pids[r->nr_pids]) ||
		    !r->pids[r->nr_pids])
			return -EINVAL;
		r->nr_pids++;
		if (j == n)
			break;
		i = j + 1;
		if (i == n)
			return -EINVAL;	/* a trailing comma */
	}
	return r->nr_pids ? 0 : -EINVAL;
}

#define WHY(...) (snprintf(why, whylen, __VA_ARGS__), -EINVAL)

/* one KEY=VALUE of a request; seen: the keys so far, one bit each */
static int parse_kv(const char *s, size_t n, struct bp_ipc_req *r, unsigned int *seen, char *why,
		    size_t whylen)
{
	static const char *const keys[] = { "pids", "tree", "cgroup", "seconds", "hz", "json" };
	const char *eq = memchr(s, '=', n);
	size_t kl, vl, k;
	const char *v;
	int err = 0;

	if (!eq)
		return WHY("expected KEY=VALUE, got '%.*s'", (int)(n > 32 ? 32 : n), s);
	kl = eq - s;
	v = eq + 1;
	vl = n - kl - 1;
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strlen(keys[k]) == kl && !memcmp(keys[k], s, kl))
			break;
	if (k == sizeof(keys) / sizeof(keys[0]))
		return WHY("unknown key '%.*s'", (int)(kl > 32 ? 32 : kl), s);
	if (*seen & (1u << k))
		return WHY("key '%s' given twice", keys[k]);
	*seen |= 1u << k;
	switch (k) {
	case 0:
		err = parse_pids(v, vl, r);
		if (err == -E2BIG)
			return WHY("at most %d pids in one request", BP_IPC_MAX_PIDS);
		break;
	case 1:
		err = parse_u32(v, vl, INT32_MAX, &r->tree);
		if (!err && !r->tree)
			err = -EINVAL;
		break;
	case 2:
		err = decode(v, vl, r->cgroup, sizeof(r->cgroup));
		if (err == -ENAMETOOLONG)
			return WHY("cgroup path longer than %d bytes", BP_IPC_MAX_PATH - 1);
		if (!err && r->cgroup[0] != '/')
			err = -EINVAL;
		r->have_cgroup = !err;
		break;
	case 3:
		err = parse_u32(v, vl, BP_IPC_MAX_SECONDS, &r->seconds);
		break;
	case 4:
		err = parse_u32(v, vl, BP_IPC_MAX_HZ, &r->hz);
		if (!err && !r->hz)
			err = -EINVAL;
		break;
	case 5:
		err = vl == 1 && v[0] == '1' ? 0 : -EINVAL;
		r->json = !err;
		break;
	}
	if (err)
		return WHY("bad value for %s", keys[k]);
	return 0;
}

int bp_ipc_parse_request(const char *line, size_t len, struct bp_ipc_req *r, char *why,
			 size_t whylen)
{
	size_t i = 0, ml = strlen(BP_IPC_MAGIC);
	unsigned int seen = 0;
	size_t v;

	memset(r, 0, sizeof(*r));
	if (len && line[len - 1] == '\n')
		len--;
	if (len >= BP_IPC_MAX_LINE)
		return WHY("request longer than %d bytes", BP_IPC_MAX_LINE - 1);
	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
			return WHY("request holds a byte that is not printable ASCII");
	if (len == 4 && !memcmp(line, "stop", 4)) {
		r->verb = BP_IPC_STOP;
		return 0;
	}
	if (len < ml + 1 || memcmp(line, BP_IPC_MAGIC, ml) || line[ml] != ' ')
		return WHY("not a boundprof/1 request (client and agent of different versions?)");
	i = ml + 1;
	v = i;
	while (i < len && line[i] != ' ')
		i++;
	for (r->verb = BP_IPC_RECORD; r->verb <= BP_IPC_DUMP; r->verb++)
		if (strlen(verbs[r->verb]) == i - v && !memcmp(verbs[r->verb], line + v, i - v))
			break;
	if (r->verb > BP_IPC_DUMP)
		return WHY("unknown request '%.*s'", (int)(i - v > 32 ? 32 : i - v), line + v);
	while (i < len) {
		size_t s;
		int err;

		if (line[i] != ' ')
			return WHY("bad request");
		i++;
		s = i;
		while (i < len && line[i] != ' ')
			i++;
		if (i == s)
			return WHY("two spaces in a row");
		err = parse_kv(line + s, i - s, r, &seen, why, whylen);
		if (err)
			return err;
	}
	if ((!!r->nr_pids + !!r->tree + r->have_cgroup) > 1)
		return WHY("give one of pids=, tree= and cgroup=");
	return 0;
}

static int put(char *out, size_t size, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int put(char *out, size_t size, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out + *o, size - *o, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *o)
		return -ENAMETOOLONG;
	*o += n;
	return 0;
}

int bp_ipc_format_request(const struct bp_ipc_req *r, char *out, size_t size)
{
	size_t o = 0, i;
	int err;

	if (size > BP_IPC_MAX_LINE)
		size = BP_IPC_MAX_LINE;
	if (r->verb == BP_IPC_STOP)
		return put(out, size, &o, "stop\n") ?: (int)o;
	if (r->verb < BP_IPC_RECORD || r->verb > BP_IPC_DUMP)
		return -EINVAL;
	err = put(out, size, &o, "%s %s", BP_IPC_MAGIC, verbs[r->verb]);
	for (i = 0; !err && i < r->nr_pids && i < BP_IPC_MAX_PIDS; i++)
		err = put(out, size, &o, "%s%u", i ? "," : " pids=", r->pids[i]);
	if (!err && r->tree)
		err = put(out, size, &o, " tree=%u", r->tree);
	if (!err && r->have_cgroup) {
		const unsigned char *c = (const unsigned char *)r->cgroup;

		err = put(out, size, &o, " cgroup=");
		for (; !err && *c; c++)
			err = *c <= 0x20 || *c >= 0x7f || *c == '%' ?
				      put(out, size, &o, "%%%02X", *c) :
				      put(out, size, &o, "%c", *c);
	}
	if (!err && r->seconds)
		err = put(out, size, &o, " seconds=%u", r->seconds);
	if (!err && r->hz)
		err = put(out, size, &o, " hz=%u", r->hz);
	if (!err && r->json)
		err = put(out, size, &o, " json=1");
	if (!err)
		err = put(out, size, &o, "\n");
	return err ?: (int)o;
}

static int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n || n > 12)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* the rest of the line as text: printable, at most what fits */
static void text_of(const char *s, size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 1 < size; i++)
		out[o++] = (unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
	out[o] = '\0';
}

int bp_ipc_parse_reply(const char *line, size_t len, struct bp_ipc_reply *rep)
{
	uint32_t v;

	memset(rep, 0, sizeof(*rep));
	if (len && line[len - 1] == '\n')
		len--;
	if (len >= BP_IPC_MAX_LINE)
		return -EINVAL;
	if (len > 3 && !memcmp(line, "ok ", 3)) {
		const char *hz = len > 3 ? memmem(line + 3, len - 3, " hz=", 4) : NULL;

		rep->kind = BP_IPC_R_OK;
		if (!hz || parse_u32(hz + 4, line + len - hz - 4, BP_IPC_MAX_HZ, &rep->hz))
			return -EINVAL;
		return 0;
	}
	if (len >= 5 && !memcmp(line, "note ", 5)) {
		rep->kind = BP_IPC_R_NOTE;
		text_of(line + 5, len - 5, rep->text, sizeof(rep->text));
		return 0;
	}
	if (len >= 8 && !memcmp(line, "error ", 6) && line[7] == ' ') {
		rep->kind = BP_IPC_R_ERROR;
		if (parse_u32(line + 6, 1, 2, &v) || !v)
			return -EINVAL;
		rep->status = (int)v;
		text_of(line + 8, len - 8, rep->text, sizeof(rep->text));
		return 0;
	}
	if (len > 8 && !memcmp(line, "profile ", 8)) {
		rep->kind = BP_IPC_R_PROFILE;
		return parse_u64(line + 8, len - 8, BP_IPC_MAX_BLOB, &rep->len);
	}
	if (len > 6 && !memcmp(line, "slice ", 6)) {
		rep->kind = BP_IPC_R_SLICE;
		return parse_u64(line + 6, len - 6, BP_IPC_MAX_BLOB, &rep->len);
	}
	if (len > 5 && !memcmp(line, "dump ", 5)) {
		rep->kind = BP_IPC_R_DUMP;
		return parse_u64(line + 5, len - 5, BP_IPC_MAX_BLOB, &rep->len);
	}
	return -EINVAL;
}

int bp_ipc_format_error(char *out, size_t size, int status, const char *text)
{
	size_t o, i;

	if (size < 10)
		return -ENAMETOOLONG;
	if (size > BP_IPC_MAX_LINE)
		size = BP_IPC_MAX_LINE;
	o = (size_t)snprintf(out, size, "error %d ", status == 2 ? 2 : 1);
	for (i = 0; text[i] && o + 2 < size; i++)
		out[o++] = (unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7f ?
				   '?' : text[i];
	out[o++] = '\n';
	out[o] = '\0';
	return (int)o;
}
