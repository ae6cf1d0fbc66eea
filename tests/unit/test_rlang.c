// SPDX-License-Identifier: GPL-2.0
/*
 * The R pieces that need no BPF: the context layout checked against the
 * installed libR (Debian's r-base-core), the R view of a mixed stack, and
 * the R verdicts (vectorize an interpreted loop; BLAS is a building block).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/classify.h"
#include "analyze/python.h"
#include "builders.h"
#include "model/profile.h"
#include "symbolize/python_elf.h"
#include "symbolize/r_layout.h"

#define LIBR	"/usr/lib/R/lib/libR.so"
#define RDESC	"/usr/lib/R/library/base/DESCRIPTION"

/* the rows cover what they say, and nothing else */
static void layout__rows(void **state)
{
	(void)state;
	assert_non_null(bp_r_layout_find(4, 0));
	assert_int_equal(bp_r_layout_find(4, 2)->srcref, 368);
	assert_int_equal(bp_r_layout_find(4, 4)->srcref, 384);
	assert_null(bp_r_layout_find(3, 6));
	assert_null(bp_r_layout_find(9, 0));
}

/* the installed libR's own code agrees with its version's row */
static void layout__installed_libR_matches_its_row(void **state)
{
	unsigned int major = 0, minor = 0;
	const struct bp_r_layout *row;
	struct bp_r_facts f;
	struct bp_pyelf *e;
	char line[256], why[256];
	FILE *fp;
	int fd;

	(void)state;
	fd = open(LIBR, O_RDONLY | O_CLOEXEC);
	fp = fopen(RDESC, "r");
	if (fd < 0 || !fp) {
		fprintf(stderr, "unchecked: no Debian R installed (%s)\n", LIBR);
		if (fd >= 0)
			close(fd);
		if (fp)
			fclose(fp);
		return;
	}
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "Version: %u.%u", &major, &minor) == 2)
			break;
	fclose(fp);
	assert_int_equal(bp_pyelf__open(fd, &e), 0);
	assert_int_equal(bp_r_facts(e, &f), 0);
	row = bp_r_layout_find(major, minor);
	assert_non_null(row);
	why[0] = '\0';
	if (bp_r_layout_check(e, &f, row, why, sizeof(why)))
		fail_msg("R %u.%u: %s", major, minor, why);
	/* R_BCbody and R_BCpc, next to each other, found in Rf_begincontext */
	assert_true(f.bc_body != 0);
	assert_int_equal(f.bc_pc, f.bc_body + 8);
	fprintf(stderr, "R %u.%u: srcref at %u, R_BCbody at %#llx\n", major, minor, f.srcref_off,
		(unsigned long long)f.bc_body);
	/* a row of another layout is refused, with the reason */
	assert_int_equal(bp_r_layout_check(e, &f, bp_r_layout_find(4, row->minor_lo ? 0 : 4),
					   why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "srcref"));
	bp_pyelf__free(e);
}

/*
 * The R view: the R frames, then the native code they call (BLAS); not
 * the interpreter (libR.so) nor what runs R (main) above the first R frame.
 */
static void view__r_frames_over_blas(void **state)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t out[16], n, mainf, eval, bc, gram, cp, syrk, memcpy_;
	struct bp_frame rf = { .python = true, .module = "libR.so", .file = "/x/rblas.R" };

	(void)state;
	assert_non_null(p);
	mainf = bld_frame(p, "main", "R", "/usr/lib/R/bin/exec/R", NULL, 0x10, false);
	eval = bld_frame(p, "Rf_eval", "libR.so", "/usr/lib/R/lib/libR.so", NULL, 0x20, false);
	bc = bld_frame(p, NULL, "libR.so", "/usr/lib/R/lib/libR.so", NULL, 0x30, false);
	rf.name = "gram";
	rf.line = 9;
	gram = (uint32_t)bp_profile__frame(p, &rf);
	rf.name = "crossprod";
	rf.file = NULL;
	rf.line = 0;
	cp = (uint32_t)bp_profile__frame(p, &rf);
	syrk = bld_frame(p, "dsyrk_", "libblas.so.3", "/usr/lib/libblas.so.3", NULL, 0x40, false);
	memcpy_ = bld_frame(p, "memcpy", "libc.so.6", "/lib/libc.so.6", NULL, 0x50, false);
	assert_true(bp_frame_r(&p->frames[gram]));
	assert_false(bp_frame_r(&p->frames[eval]));
	n = bp_python_view_stack(p, (uint32_t[]){ mainf, eval, bc, gram, cp, eval, syrk, memcpy_ },
				 8, out);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], gram);
	assert_int_equal(out[1], cp);
	assert_int_equal(out[2], syrk);
	assert_int_equal(out[3], memcpy_);
	/* R's own work under an R frame is the frame's: nothing below it */
	n = bp_python_view_stack(p, (uint32_t[]){ mainf, eval, gram, bc, memcpy_ }, 5, out);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], gram);
	bp_profile__free(p);
}

static bool has_line(const struct bp_verdict *v, bool lever, const char *needle)
{
	uint32_t i, n = lever ? v->nr_levers : v->nr_evidence;

	for (i = 0; i < n; i++)
		if (strstr(lever ? v->levers[i] : v->evidence[i], needle))
			return true;
	return false;
}

static struct bp_evidence r_loop(double native, const char *native_name, bool block)
{
	struct bp_evidence e = {
		.who = "R",
		.wall_s = 5,
		.have_timeline = true,
		.on_s = 5,
		.threads = 1,
		.ncpus = 2,
		.machine_busy = 0.5,
		.samples = 500,
		.mem_valid = true,
		.rss = 8 << 20,
		.llc_bytes = 32 << 20,
		.r_version = "4.2.2",
		.hot_name = "heavy (rsplit.R:15)",
		.hot_frac = 0.7,
		.py_hot = true,
		.py_native = native,
		.r_native_block = block,
	};

	e.tl_s[BP_TS_RUNNING] = 5;
	if (native_name)
		snprintf(e.py_native_name, sizeof(e.py_native_name), "%s", native_name);
	return e;
}

/* R's ladder: vectorize, data.table or BLAS, Rcpp, processes; BLAS time is a building block */
static void classify__r_levers(void **state)
{
	struct bp_evidence e = r_loop(0, NULL, false);
	struct bp_verdict v;

	(void)state;
	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "heavy (rsplit.R:15) is 70% of wall time"));
	assert_true(has_line(&v, true, "Vectorize heavy (rsplit.R:15)"));
	assert_true(has_line(&v, true, "data.table"));
	assert_true(has_line(&v, true, "Rcpp"));
	assert_true(has_line(&v, true, "parallel::mclapply"));
	assert_false(has_line(&v, true, "NumPy"));
	bp_verdict_free(&v);
	/* under BLAS: a building block, never "vectorize" */
	e = r_loop(0.9, "dsyrk_ in libblas.so.3", true);
	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "90% of its time is compiled code it calls, mostly dsyrk_"));
	assert_true(has_line(&v, true, "building block"));
	assert_true(has_line(&v, true, "if R uses the reference one"));
	assert_false(has_line(&v, true, "Vectorize"));
	bp_verdict_free(&v);
	/* no srcrefs: the report names the option */
	e = r_loop(0, NULL, false);
	e.r_nosrc = true;
	e.hot_name = "heavy";
	bp_classify(&e, NULL, &v);
	assert_true(has_line(&v, false, "keep.source = TRUE"));
	bp_verdict_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layout__rows),
		cmocka_unit_test(layout__installed_libR_matches_its_row),
		cmocka_unit_test(view__r_frames_over_blas),
		cmocka_unit_test(classify__r_levers),
	};

	return cmocka_run_group_tests_name("rlang", tests, NULL, NULL);
}
