// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON reader: any bytes parse or are refused with a message; a parsed
 * tree is walked through every accessor, written back with the writer, and
 * must parse again into the same tree (the writer always writes valid JSON).
 */
#include <math.h>

#include "fuzz.h"

#include "util/json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

static unsigned int walk(const struct bp_json *v, unsigned int depth)
{
	unsigned int d, max = depth;
	int64_t i64;
	uint64_t u64;
	size_t i, n = bp_json_len(v);

	switch (bp_json_type(v)) {
	case BP_JSON_NUMBER:
		if (isnan(bp_json_num(v)) || isinf(bp_json_num(v)))
			abort();
		bp_json_int(v, &i64);
		bp_json_uint(v, &u64);
		break;
	case BP_JSON_STRING:
		/* decoded strings are NUL-terminated after len bytes */
		if (bp_json_str(v)[n] != '\0')
			abort();
		break;
	case BP_JSON_BOOL:
		if (bp_json_bool(v) < 0)
			abort();
		break;
	case BP_JSON_OBJECT:
		for (i = 0; i < n; i++) {
			const char *key = bp_json_key_at(v, i);

			if (!key)
				abort();
			(void)bp_json_get(v, key);
		}
		/* fall through */
	case BP_JSON_ARRAY:
		for (i = 0; i < n; i++) {
			d = walk(bp_json_at(v, i), depth + 1);
			if (d > max)
				max = d;
		}
		if (bp_json_at(v, n))
			abort();
		break;
	default:
		break;
	}
	return max;
}

static void write_value(struct bp_json_w *w, const struct bp_json *v)
{
	size_t i, n = bp_json_len(v);
	int64_t i64;
	uint64_t u64;

	switch (bp_json_type(v)) {
	case BP_JSON_NULL:
		bp_json_w_null_val(w);
		break;
	case BP_JSON_BOOL:
		bp_json_w_bool_val(w, bp_json_bool(v));
		break;
	case BP_JSON_NUMBER:
		if (!bp_json_int(v, &i64))
			bp_json_w_int64(w, i64);
		else if (!bp_json_uint(v, &u64))
			bp_json_w_uint64(w, u64);
		else
			bp_json_w_double_val(w, bp_json_num(v));
		break;
	case BP_JSON_STRING:
		bp_json_w_string_n(w, bp_json_str(v), n);
		break;
	case BP_JSON_ARRAY:
		bp_json_w_begin_array(w);
		for (i = 0; i < n; i++)
			write_value(w, bp_json_at(v, i));
		bp_json_w_end_array(w);
		break;
	case BP_JSON_OBJECT:
		bp_json_w_begin_object(w);
		for (i = 0; i < n; i++) {
			bp_json_w_key(w, bp_json_key_at(v, i));
			write_value(w, bp_json_at(v, i));
		}
		bp_json_w_end_object(w);
		break;
	default:
		abort();
	}
}

/* the same tree; keys as C strings (a key's own NUL cuts it, in both) */
static bool same(const struct bp_json *a, const struct bp_json *b)
{
	size_t i, n = bp_json_len(a);

	if (bp_json_type(a) != bp_json_type(b) || n != bp_json_len(b))
		return false;
	switch (bp_json_type(a)) {
	case BP_JSON_BOOL:
		return bp_json_bool(a) == bp_json_bool(b);
	case BP_JSON_NUMBER:
		return bp_json_num(a) == bp_json_num(b);
	case BP_JSON_STRING:
		return !memcmp(bp_json_str(a), bp_json_str(b), n);
	case BP_JSON_OBJECT:
		for (i = 0; i < n; i++)
			if (strcmp(bp_json_key_at(a, i), bp_json_key_at(b, i)))
				return false;
		/* fall through */
	case BP_JSON_ARRAY:
		for (i = 0; i < n; i++)
			if (!same(bp_json_at(a, i), bp_json_at(b, i)))
				return false;
		return true;
	default:
		return true;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_buf out = BP_BUF_INIT;
	struct bp_json *root, *again;
	struct bp_json_w w;
	char err[128];
	unsigned int depth;
	int pretty;

	err[0] = '\0';
	root = bp_json_parse((const char *)data, size, err, sizeof(err));
	if (!root) {
		if (!err[0] || strchr(err, '\n'))
			abort();
		return 0;
	}
	depth = walk(root, 0);
	(void)bp_json_path(root, size && data[0] == '{' ? "a.b[0]" : "[0][1]");
	if (depth < BP_JSON_W_MAX_DEPTH) {
		for (pretty = 0; pretty < 2; pretty++) {
			bp_buf_reset(&out);
			bp_json_w_init(&w, &out, pretty);
			write_value(&w, root);
			if (bp_json_w_finish(&w))
				abort();
			again = bp_json_parse(out.data, out.len, err, sizeof(err));
			if (!again) {
				fprintf(stderr, "the writer wrote what the reader refuses: %s\n%.*s\n",
					err, (int)out.len, out.data);
				abort();
			}
			if (!same(root, again)) {
				fprintf(stderr, "written and read back, the tree changed:\n%.*s\n",
					(int)out.len, out.data);
				abort();
			}
			bp_json_free(again);
		}
	}
	bp_json_free(root);
	bp_buf_free(&out);
	return 0;
}
