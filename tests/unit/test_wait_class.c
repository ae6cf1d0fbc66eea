// SPDX-License-Identifier: GPL-2.0
/*
 * The wait-class table (bpf/wait_classes.h, model/wait_class.h): the names
 * and ABI values that are contracts stay, every class has everything each
 * accessor asks of it, and the outputs built from the table (diff, folded,
 * flame data) name every class. A class added without a column, or an
 * accessor that misses a class, fails here.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "analyze/analyze.h"
#include "analyze/diff.h"
#include "export/flame.h"
#include "export/folded.h"
#include "model/wait_class.h"
#include "rules.h"
#include "util/json.h"
#include "unit/builders.h"

static void wait_class__contract_names_and_abi_values(void **state)
{
	/* what saved profiles, bp_off_key and the JSON report hold */
	static const struct {
		enum bp_kind kind;
		const char *name, *state;
		uint32_t value;
	} contract[] = {
		{ BP_KIND_ONCPU, "oncpu", "running", 0 },
		{ BP_KIND_RUNQUEUE, "runqueue", "runqueue", 1 },
		{ BP_KIND_IO, "io", "io", 2 },
		{ BP_KIND_LOCK, "lock", "lock", 3 },
		{ BP_KIND_OTHER, "other", "other", 4 },
		{ BP_KIND_SLEEP, "sleep", "sleep", 5 },
		{ BP_KIND_NET, "net", "net", 6 },
		{ BP_KIND_PIPE, "pipe", "pipe", 7 },
	};
	uint32_t i;

	assert_int_equal(BP_TS_RUNNING, 0);
	assert_int_equal(BP_TS_RUNQUEUE, 1);
	assert_int_equal(BP_TS_IO, 2);
	assert_int_equal(BP_TS_LOCK, 3);
	assert_int_equal(BP_TS_OTHER, 4);
	assert_int_equal(BP_TS_SLEEP, 5);
	assert_int_equal(BP_TS_NET, 6);
	assert_int_equal(BP_TS_PIPE, 7);
	for (i = 0; i < sizeof(contract) / sizeof(contract[0]); i++) {
		assert_string_equal(bp_kind_name(contract[i].kind), contract[i].name);
		assert_int_equal(bp_wait_classes[contract[i].kind].tstate, contract[i].value);
		assert_string_equal(bp_tstate_name(contract[i].value), contract[i].state);
	}
}

static bool hsl_ok(const uint16_t *c)
{
	return c[0] < 360 && c[1] < 360 && c[2] <= 100 && c[3] <= 100;
}

static void wait_class__every_class_through_every_accessor(void **state)
{
	const uint32_t rank[BP_TS__MAX] = BP_TS_RANK_OF;
	uint32_t seen_value[BP_TS__MAX] = {}, seen_rank[BP_TS__MAX] = {};
	int k, j;

	assert_int_equal(BP_KIND__MAX, BP_TS__MAX);
	for (k = 0; k < BP_KIND__MAX; k++) {
		const struct bp_wait_class *c = bp_wclass(k);
		const char *const text[] = { c->name, c->state, c->label, c->frame, c->text,
					     c->threads, c->wall, c->verdict };
		size_t n;

		assert_ptr_equal(c, &bp_wait_classes[k]);
		for (j = 0; j < (int)(sizeof(text) / sizeof(text[0])); j++) {
			assert_non_null(text[j]);
			assert_true(text[j][0]);
		}
		n = strlen(c->frame);
		assert_true(n > 2 && c->frame[0] == '[' && c->frame[n - 1] == ']');
		assert_true(hsl_ok(c->user) && hsl_ok(c->kernel));
		assert_true(c->busy <= BP_BUSY_PEER);
		/* the two enums are one class each way */
		assert_true(c->tstate < BP_TS__MAX);
		assert_int_equal(bp_kind_of_state(c->tstate), k);
		assert_ptr_equal(bp_wclass_of_state(c->tstate), c);
		assert_int_equal(bp_kind_find(c->name), k);
		assert_string_equal(bp_kind_name(k), c->name);
		assert_string_equal(bp_tstate_name(c->tstate), c->state);
		assert_string_equal(bp_diff_kind_label(k), c->label);
		assert_int_equal(rank[c->tstate], c->rank);
		seen_value[c->tstate]++;
		seen_rank[c->rank]++;
		/* names, frames and labels tell the classes apart */
		for (j = 0; j < k; j++) {
			assert_string_not_equal(bp_wait_classes[j].name, c->name);
			assert_string_not_equal(bp_wait_classes[j].frame, c->frame);
			assert_string_not_equal(bp_wait_classes[j].label, c->label);
			assert_string_not_equal(bp_wait_classes[j].text, c->text);
		}
	}
	for (k = 0; k < BP_TS__MAX; k++) {
		assert_int_equal(seen_value[k], 1);
		assert_int_equal(seen_rank[k], 1);
	}
	/* past the table: other, as an unknown wait label is */
	assert_ptr_equal(bp_wclass(BP_KIND__MAX), &bp_wait_classes[BP_KIND_OTHER]);
	assert_int_equal(bp_kind_of_state(BP_TS__MAX), BP_KIND_OTHER);
	assert_string_equal(bp_kind_name(BP_KIND__MAX), "unknown");
	assert_string_equal(bp_tstate_name(BP_TS__MAX), "unknown");
	assert_true(bp_kind_find("no-such-class") < 0);
}

static void busy__counts_what_the_table_says(void **state)
{
	double off[BP_KIND__MAX];
	int k;

	for (k = 0; k < BP_KIND__MAX; k++)
		off[k] = 1u << k;
	/* on-CPU 1000, a client's network waits 0.5 of the 64 of net */
	assert_true(bp_busy_s(1000, off, 0.5, true) ==
		    1000 + off[BP_KIND_RUNQUEUE] + off[BP_KIND_IO] + off[BP_KIND_LOCK] +
		    off[BP_KIND_OTHER] + 0.5 + off[BP_KIND_PIPE]);
	assert_true(bp_busy_s(1000, off, 0.5, false) ==
		    1000 + off[BP_KIND_RUNQUEUE] + off[BP_KIND_IO] + off[BP_KIND_LOCK] +
		    off[BP_KIND_OTHER] + 0.5);
}

/* one process with 1 s of every class, on the stack main */
static struct bp_profile *every_class(uint64_t scale)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t st;
	int k;

	assert_non_null(p);
	p->hz = 99;
	p->ncpus = 2;
	p->start_ns = 0;
	p->end_ns = 2000000000;
	bld_proc(p, 1, 0, "app", "app");
	st = BLD_STACK(p, bld_frame(p, "main", "app", "/bin/app", NULL, 0x10, false));
	for (k = 0; k < BP_KIND__MAX; k++)
		bld_sample(p, 1, 1, k, st, 99 * scale, 1000000000ull * scale);
	return p;
}

static void diff__every_class_that_grew__named(void **state)
{
	struct bp_profile *a = every_class(1), *b = every_class(2);
	struct bp_buf out = BP_BUF_INIT;
	struct bp_json *j;
	struct bp_diff d;
	struct bp_gate g;
	bool named[BP_KIND__MAX] = {};
	uint32_t i;
	int k;

	assert_int_equal(bp_diff(a, b, &d), 0);
	assert_int_equal(bp_diff_gate(a, b, &d, 0.01, &g), 0);
	assert_int_equal(g.nr_kinds, BP_KIND__MAX);
	assert_int_equal(bp_diff_json_gate(&d, &g, "a", "b", 5, &out), 0);
	j = bp_json_parse(out.data, out.len, NULL, 0);
	assert_non_null(j);
	/* the functions that grew, then the classes */
	for (i = 0; i < g.nr_fns + g.nr_kinds; i++) {
		char path[64];
		const char *cls;

		snprintf(path, sizeof(path), "gate.grew[%u].class", i);
		cls = bp_json_str(bp_json_path(j, path));
		if (i < g.nr_fns) {
			assert_null(cls);
			continue;
		}
		assert_non_null(cls);
		for (k = 0; k < BP_KIND__MAX; k++)
			if (!strcmp(cls, bp_wait_classes[k].label))
				named[k] = true;
	}
	for (k = 0; k < BP_KIND__MAX; k++)
		assert_true(named[k]);
	bp_json_free(j);
	bp_buf_free(&out);
	bp_diff_free(&d);
	bp_profile__free(a);
	bp_profile__free(b);
}

static void folded_and_flame__every_class_frame(void **state)
{
	struct bp_profile *p = every_class(1);
	struct bp_flame_opts o = { .format = BP_FLAME_HTML, .initial_view = BP_VIEW_WALL };
	struct bp_buf folded = BP_BUF_INIT, flame = BP_BUF_INIT;
	int k;

	assert_int_equal(bp_export_folded_view(p, BP_VIEW_WALL, &folded), 0);
	assert_int_equal(bp_export_flame(p, NULL, &o, &flame), 0);
	for (k = 0; k < BP_KIND__MAX; k++) {
		char frame[64], text[96];

		snprintf(frame, sizeof(frame), "app;%s;main ", bp_wait_classes[k].frame);
		assert_non_null(strstr(bp_buf_str(&folded), frame));
		/* the flame graph's data carries the class list flame.js draws from */
		snprintf(text, sizeof(text), "\"text\":\"%s\"", bp_wait_classes[k].text);
		assert_non_null(strstr(bp_buf_str(&flame), text));
	}
	bp_buf_free(&folded);
	bp_buf_free(&flame);
	bp_profile__free(p);
}

/* a file of the source tree, NUL-terminated */
static char *read_doc(const char *rel)
{
	const char *src = getenv("BP_SRC") ? getenv("BP_SRC") : ".";
	char path[4096], *doc;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", src, rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot read %s (BP_SRC is the source root)", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	doc = calloc(1, n + 1);
	assert_non_null(doc);
	assert_int_equal(fread(doc, 1, n, f), n);
	fclose(f);
	return doc;
}

/* docs/offcpu.md has a row for every class, most productive first, as the ranks say */
static void docs__offcpu_lists_every_class_by_rank(void **state)
{
	char row[128], *doc = read_doc("docs/offcpu.md");
	const char *at[BP_KIND__MAX];
	int k, j;

	for (k = 0; k < BP_KIND__MAX; k++) {
		const struct bp_wait_class *c = &bp_wait_classes[k];

		snprintf(row, sizeof(row), "\n| %s | `%s`", c->state, c->state);
		at[k] = strstr(doc, row);
		if (!at[k])
			fail_msg("docs/offcpu.md has no row '%s' for the class %s", row + 1, c->name);
	}
	for (k = 0; k < BP_KIND__MAX; k++)
		for (j = 0; j < BP_KIND__MAX; j++)
			if (bp_wait_classes[j].rank < bp_wait_classes[k].rank && at[j] > at[k])
				fail_msg("docs/offcpu.md lists %s before %s, which ranks higher",
					 bp_wait_classes[k].name, bp_wait_classes[j].name);
	free(doc);
}

/* the docs that list the classes by name name every one */
static void docs__every_class_named(void **state)
{
	static const char *const names_in[] = { "docs/formats.md", "docs/agent.md",
						"docs/pprof.md" };
	char want[64], alt[64], key[64], *doc;
	uint32_t i;
	int k;

	for (i = 0; i < sizeof(names_in) / sizeof(names_in[0]); i++) {
		doc = read_doc(names_in[i]);
		for (k = BP_KIND_ONCPU + 1; k < BP_KIND__MAX; k++) {
			snprintf(want, sizeof(want), "`%s`", bp_wait_classes[k].name);
			snprintf(alt, sizeof(alt), ".%s`", bp_wait_classes[k].name);
			snprintf(key, sizeof(key), "\"%s\"", bp_wait_classes[k].name);
			if (!strstr(doc, want) && !strstr(doc, alt) && !strstr(doc, key))
				fail_msg("%s does not name the wait class %s", names_in[i], want);
		}
		free(doc);
	}
	doc = read_doc("docs/flamegraph.md");
	for (k = 0; k < BP_KIND__MAX; k++) {
		snprintf(want, sizeof(want), "`%s`", bp_wait_classes[k].frame);
		if (!strstr(doc, want))
			fail_msg("docs/flamegraph.md has no frame %s", want);
	}
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wait_class__contract_names_and_abi_values),
		cmocka_unit_test(wait_class__every_class_through_every_accessor),
		cmocka_unit_test(busy__counts_what_the_table_says),
		cmocka_unit_test(diff__every_class_that_grew__named),
		cmocka_unit_test(folded_and_flame__every_class_frame),
		cmocka_unit_test(docs__offcpu_lists_every_class_by_rank),
		cmocka_unit_test(docs__every_class_named),
	};

	return cmocka_run_group_tests_name("wait_class", tests, NULL, NULL);
}
