// SPDX-License-Identifier: GPL-2.0
/*
 * The table of every counter (bpf/counters.h, model/counters.h): the names
 * and values that are contracts stay; the JSON report, the text report and
 * /metrics carry every counter of the table under its one name; the table
 * in docs/architecture.md lists exactly the counters of the table.
 */
#include <ctype.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "export/report_json.h"
#include "export/report_text.h"
#include "model/counters.h"
#include "serve/metrics.h"
#include "util/json.h"
#include "unit/builders.h"

static void counters__contract_names_and_abi_values(void **state)
{
	/* the drops_detail keys of report version 1 and the enum values saved profiles hold */
	static const struct {
		const char *name, *id;
		int value;		/* -1: a userspace counter */
	} contract[] = {
		{ "samples_map_full", "BP_STAT_MAP_FULL", 4 },
		{ "kernel_stack_errors", "BP_STAT_KSTACK_ERR", 5 },
		{ "user_stack_errors", "BP_STAT_USTACK_ERR", 6 },
		{ "stack_map_full", "BP_STAT_STACK_FULL", 7 },
		{ "user_stacks_truncated", "BP_STAT_USTACK_TRUNC", 8 },
		{ "events_lost", "BP_STAT_EVENT_DROP", 9 },
		{ "seen_map_full", "BP_STAT_SEEN_FULL", 10 },
		{ "target_map_full", "BP_STAT_TARGET_FULL", 11 },
		{ "offcpu_map_full", "BP_STAT_OFF_MAP_FULL", 13 },
		{ "thread_state_failures", "BP_STAT_TSTORE_FAIL", 14 },
		{ "process_state_failures", "BP_STAT_PSTATE_FULL", 15 },
		{ "io_requests_untracked", "BP_STAT_IO_RQ_FULL", 17 },
		{ "io_map_full", "BP_STAT_IO_MAP_FULL", 18 },
		{ "io_completions_unmatched", "BP_STAT_IO_NO_START", 19 },
		{ "wakers_map_full", "BP_STAT_WAKE_MAP_FULL", 20 },
		{ "net_map_full", "BP_STAT_NET_MAP_FULL", 21 },
		{ "unwind_no_table", "BP_STAT_UW_NO_TABLE", 23 },
		{ "unwind_over_budget", "BP_STAT_UW_BUDGET", 24 },
		{ "unwind_bad_read", "BP_STAT_UW_BAD_READ", 25 },
		{ "unwind_invalid_row", "BP_STAT_UW_INVALID", 26 },
		{ "python_thread_state_errors", "BP_STAT_PY_TSTATE_ERR", 27 },
		{ "python_frames_unreadable", "BP_STAT_PY_FRAME_ERR", 28 },
		{ "python_stacks_truncated", "BP_STAT_PY_TRUNC", 29 },
		{ "python_code_events_lost", "BP_STAT_PY_CODE_LOST", 30 },
		{ "user_stacks_cut", "user_stacks_cut", -1 },
		{ "io_completions_unseen", "io_done_unseen", -1 },
		{ "unwind_tables_over_budget", "uw_tables_over_budget", -1 },
		{ "python_code_unread", "py_code_unread", -1 },
	};
	static const struct {
		const char *id;
		int value;
	} seen[] = {
		{ "BP_STAT_SAMPLES", 0 }, { "BP_STAT_IDLE", 1 }, { "BP_STAT_FILTERED", 2 },
		{ "BP_STAT_COUNTED", 3 }, { "BP_STAT_SWITCHES", 12 }, { "BP_STAT_STACKS_CACHED", 16 },
		{ "BP_STAT_UW_STACKS", 22 },
	};
	size_t i;
	uint32_t j;

	for (i = 0; i < sizeof(contract) / sizeof(contract[0]); i++) {
		const struct bp_counter *c = bp_counter_find(contract[i].name);

		if (!c)
			fail_msg("counter %s is gone: JSON names are a contract", contract[i].name);
		assert_string_equal(c->id, contract[i].id);
		assert_int_not_equal(c->kind, BP_CNT_SEEN);
		assert_int_equal(c->bpf, contract[i].value >= 0);
		if (c->bpf)
			assert_int_equal(c->value, contract[i].value);
	}
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		for (j = 0; j < bp_nr_counters; j++)
			if (!strcmp(bp_counters[j].id, seen[i].id))
				break;
		if (j == bp_nr_counters)
			fail_msg("%s is gone: enum values are the ABI", seen[i].id);
		assert_int_equal(bp_counters[j].value, seen[i].value);
		assert_int_equal(bp_counters[j].kind, BP_CNT_SEEN);
	}
	/* the enum is made from the table */
	assert_int_equal(BP_STAT_MAP_FULL, 4);
	assert_int_equal(BP_STAT_IO_NO_START, 19);
	assert_int_equal(BP_UCNT__MAX, 4);
	assert_ptr_equal(&((struct bp_profile *)0)->ucounts[BP_UCNT_io_done_unseen],
			 &((struct bp_profile *)0)->io_done_unseen);
}

static void counters__names_unique_and_well_formed(void **state)
{
	bool used[BP_STAT__MAX] = {}, uused[BP_UCNT__MAX] = {};
	uint32_t i, j, nu = 0;
	const char *s;

	for (i = 0; i < bp_nr_counters; i++) {
		const struct bp_counter *c = &bp_counters[i];

		/* a JSON key and a Prometheus label value without escaping */
		assert_true(c->name[0] != '\0');
		for (s = c->name; *s; s++)
			if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
				fail_msg("counter name '%s': only a-z, 0-9 and _", c->name);
		/* one line of text, and a cell of a markdown table */
		assert_true(strlen(c->what) > 10);
		if (strpbrk(c->what, "\n|`"))
			fail_msg("counter %s: its description is one plain line", c->name);
		for (j = 0; j < i; j++)
			if (!strcmp(bp_counters[j].name, c->name))
				fail_msg("counter name %s twice", c->name);
		if (c->bpf) {
			assert_true(c->value < BP_STAT__MAX);
			assert_int_equal(c->idx, c->value);
			assert_false(used[c->value]);
			used[c->value] = true;
		} else {
			assert_true(c->idx < BP_UCNT__MAX);
			assert_false(uused[c->idx]);
			uused[c->idx] = true;
			nu++;
		}
		assert_ptr_equal(bp_counter_find(c->name), c);
	}
	assert_int_equal(nu, BP_UCNT__MAX);
	assert_null(bp_counter_find("no_such_counter"));
}

/* every counter set to a value of its own: BPF ones 1000 + value, userspace ones 500 + index */
static void fill(struct bp_stats *st, uint64_t *ucounts)
{
	uint32_t i;

	for (i = 0; i < BP_STAT__MAX; i++)
		st->v[i] = 1000 + i;
	for (i = 0; i < BP_UCNT__MAX; i++)
		ucounts[i] = 500 + i;
}

static void counters__add_and_sum(void **state)
{
	struct bp_stats a = {}, b;
	uint64_t ua[BP_UCNT__MAX] = {}, ub[BP_UCNT__MAX];
	uint64_t want = 0;
	uint32_t i;

	fill(&b, ub);
	bp_counters_add(&a, ua, &b, ub);
	bp_counters_add(&a, ua, &b, ub);
	for (i = 0; i < BP_STAT__MAX; i++)
		assert_true(a.v[i] == 2 * b.v[i]);
	for (i = 0; i < BP_UCNT__MAX; i++)
		assert_true(ua[i] == 2 * ub[i]);
	for (i = 0; i < bp_nr_counters; i++)
		if (bp_counters[i].kind == BP_CNT_LOST_STACK)
			want += bp_counter_value(&bp_counters[i], &b, ub);
	/* kernel and user unwind errors and a full stack map */
	assert_true(want == 1005 + 1006 + 1007);
	assert_true(bp_counters_sum(BP_CNT_LOST_STACK, &b, ub) == want);
	assert_true(bp_counters_sum(BP_CNT_LOST_SAMPLE, &b, ub) ==
		    b.v[BP_STAT_MAP_FULL] + b.v[BP_STAT_OFF_MAP_FULL]);
}

static struct bp_profile *counted_profile(void)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t f;

	assert_non_null(p);
	p->start_ns = 1000000000ULL;
	p->end_ns = 3000000000ULL;
	p->hz = 99;
	p->ncpus = 2;
	bld_proc(p, 10, 1, "app", "app");
	f = bld_frame(p, "main", "app", "/bin/app", NULL, 0x10, false);
	bld_sample(p, 10, 10, BP_KIND_ONCPU, BLD_STACK(p, f), 9, 90000000);
	fill(&p->stats, p->ucounts);
	return p;
}

static void reports__json_text_metrics_carry_every_counter(void **state)
{
	struct bp_profile *p = counted_profile();
	struct bp_buf text = BP_BUF_INIT, json = BP_BUF_INIT, prom = BP_BUF_INIT;
	struct bp_agent_self self = {};
	const struct bp_json *d;
	struct bp_summary s;
	struct bp_json *j;
	struct bp_text_opts verbose = { .verbose = true };
	char err[128], line[256];
	uint32_t i, k = 0;
	uint64_t v;

	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_export_json(p, &s, false, &json), 0);
	/* verbose: every counter, however small against the samples */
	assert_int_equal(bp_report_text(p, &s, &verbose, &text), 0);
	self.bpf = p->stats;
	memcpy(self.ucounts, p->ucounts, sizeof(self.ucounts));
	self.bpf_run_s = -1;
	assert_int_equal(bp_metrics_write(&prom, NULL, NULL, 5, NULL, 0, &self), 0);

	j = bp_json_parse(json.data, json.len, err, sizeof(err));
	if (!j)
		fail_msg("report does not parse: %s", err);
	d = bp_json_get(j, "drops_detail");
	for (i = 0; i < bp_nr_counters; i++) {
		const struct bp_counter *c = &bp_counters[i];
		uint64_t want = bp_counter_value(c, &p->stats, p->ucounts);

		/* JSON: every loss and note, in table order */
		if (c->kind != BP_CNT_SEEN) {
			assert_string_equal(bp_json_key_at(d, k), c->name);
			assert_int_equal(bp_json_uint(bp_json_at(d, k), &v), 0);
			assert_true(v == want);
			k++;
		}
		/* text: "N what", indented under "losses:" for losses */
		snprintf(line, sizeof(line), "%s%" PRIu64 " %s\n",
			 bp_counter_is_loss(c) ? "  " : "\n", want, c->what);
		if (c->kind != BP_CNT_SEEN && !strstr(bp_buf_str(&text), line))
			fail_msg("text report lacks '%s'", line);
		/* /metrics: every loss under its JSON name */
		snprintf(line, sizeof(line), "\nboundprof_agent_lost_total{reason=\"%s\"} %" PRIu64 "\n",
			 c->name, want);
		if (bp_counter_is_loss(c) != !!strstr(bp_buf_str(&prom), line))
			fail_msg("/metrics and the table disagree on %s", c->name);
		/* ... and every note and repair */
		snprintf(line, sizeof(line), "\nboundprof_agent_noted_total{reason=\"%s\"} %" PRIu64
			 "\n", c->name, want);
		if (bp_counter_is_note(c) != !!strstr(bp_buf_str(&prom), line))
			fail_msg("/metrics and the table disagree on note %s", c->name);
		/* every counter is seen, a loss or a note */
		assert_true(c->kind == BP_CNT_SEEN || bp_counter_is_loss(c) || bp_counter_is_note(c));
	}
	assert_int_equal(bp_json_len(d), k);
	assert_true(strstr(bp_buf_str(&text), "\nlosses:\n"));
	assert_int_equal(bp_json_uint(bp_json_path(j, "drops.samples"), &v), 0);
	assert_true(v == 1000 + BP_STAT_MAP_FULL + 1000 + BP_STAT_OFF_MAP_FULL);
	assert_int_equal(bp_json_uint(bp_json_path(j, "drops.stacks"), &v), 0);
	assert_true(v == 1005 + 1006 + 1007);
	bp_json_free(j);
	bp_summary_free(&s);
	bp_buf_free(&text);
	bp_buf_free(&json);
	bp_buf_free(&prom);
	bp_profile__free(p);
}

static void text__no_losses__no_losses_block(void **state)
{
	struct bp_profile *p = counted_profile();
	struct bp_buf text = BP_BUF_INIT;
	struct bp_summary s;

	memset(&p->stats, 0, sizeof(p->stats));
	memset(p->ucounts, 0, sizeof(p->ucounts));
	p->user_stacks_cut = 4;
	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_report_text(p, &s, NULL, &text), 0);
	assert_null(strstr(bp_buf_str(&text), "losses:"));
	/* a note alone gets a blank line before it, no heading */
	assert_non_null(strstr(bp_buf_str(&text),
			       "\n\n4 user stacks end at [truncated]: the unwind stopped early\n"));
	bp_summary_free(&s);
	bp_buf_free(&text);
	bp_profile__free(p);
}

/* one stack cut in hundreds of samples: one quiet line, the list with -v */
static void text__losses_under_one_percent__one_quiet_line(void **state)
{
	struct bp_profile *p = counted_profile();
	struct bp_text_opts verbose = { .verbose = true };
	struct bp_buf text = BP_BUF_INIT;
	struct bp_summary s;

	memset(&p->stats, 0, sizeof(p->stats));
	memset(p->ucounts, 0, sizeof(p->ucounts));
	p->stats.v[BP_STAT_SAMPLES] = 355;
	p->user_stacks_cut = 1;
	p->stats.v[BP_STAT_USTACK_TRUNC] = 2;
	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_report_text(p, &s, NULL, &text), 0);
	assert_non_null(strstr(bp_buf_str(&text), "\nlosses: under 1% of the samples (3 stacks or "
				"events; -v lists them)\n"));
	assert_null(strstr(bp_buf_str(&text), "[truncated]"));
	bp_buf_reset(&text);
	assert_int_equal(bp_report_text(p, &s, &verbose, &text), 0);
	assert_non_null(strstr(bp_buf_str(&text), "1 user stacks end at [truncated]"));
	assert_null(strstr(bp_buf_str(&text), "under 1%"));
	/* 2 in 150 samples: listed as before; 1 in 150 folded */
	p->stats.v[BP_STAT_SAMPLES] = 150;
	bp_buf_reset(&text);
	assert_int_equal(bp_report_text(p, &s, NULL, &text), 0);
	assert_non_null(strstr(bp_buf_str(&text), "\nlosses:\n  2 "));
	assert_non_null(strstr(bp_buf_str(&text), "and 1 more stacks or events lost or noted"));
	bp_summary_free(&s);
	bp_buf_free(&text);
	bp_profile__free(p);
}

/* the row docs/architecture.md shows for a counter */
static void docs_row(const struct bp_counter *c, char *buf, size_t len)
{
	if (c->bpf)
		snprintf(buf, len, "| `%s` | `%s` = %u | %s | %s |", c->name, c->id, c->value,
			 bp_cnt_kind_name(c->kind), c->what);
	else
		snprintf(buf, len, "| `%s` | profile `%s` | %s | %s |", c->name, c->id,
			 bp_cnt_kind_name(c->kind), c->what);
}

static void docs__architecture_table_is_the_table(void **state)
{
	static const char header[] = "| counter | source | kind | meaning |\n";
	const char *src = getenv("BP_SRC") ? getenv("BP_SRC") : ".";
	char path[4096], want[512], *doc, *at, *nl;
	uint32_t i = 0;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/docs/architecture.md", src);
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

	at = strstr(doc, header);
	if (!at)
		fail_msg("%s has no counter table (a line '%.*s')", path,
			 (int)strlen(header) - 1, header);
	at = strchr(at + strlen(header), '\n');	/* the |---| line */
	assert_non_null(at);
	for (at++; *at == '|'; at = nl + 1, i++) {
		nl = strchr(at, '\n');
		assert_non_null(nl);
		*nl = '\0';
		if (i >= bp_nr_counters)
			fail_msg("docs/architecture.md lists a counter the table has not: %s", at);
		docs_row(&bp_counters[i], want, sizeof(want));
		if (strcmp(at, want))
			fail_msg("docs/architecture.md counter row %u is\n%s\nwant\n%s", i + 1, at, want);
	}
	if (i < bp_nr_counters) {
		docs_row(&bp_counters[i], want, sizeof(want));
		fail_msg("docs/architecture.md lacks counter row %u:\n%s", i + 1, want);
	}
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counters__contract_names_and_abi_values),
		cmocka_unit_test(counters__names_unique_and_well_formed),
		cmocka_unit_test(counters__add_and_sum),
		cmocka_unit_test(reports__json_text_metrics_carry_every_counter),
		cmocka_unit_test(text__no_losses__no_losses_block),
		cmocka_unit_test(text__losses_under_one_percent__one_quiet_line),
		cmocka_unit_test(docs__architecture_table_is_the_table),
	};

	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
