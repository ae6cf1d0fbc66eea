// SPDX-License-Identifier: GPL-2.0
/*
 * Native unwinding without frame pointers, end to end (root, real BPF):
 * programs built the way distributions and cargo build them. One of each
 * kind (a Rust release build, a Debian C program) is recorded by boundprof
 * while `perf record --call-graph dwarf` records the very same run (perf
 * is the command boundprof profiles), and compared with it; the others
 * (threads, gzip, sqlite3) by boundprof's own count:
 *
 * - completeness: the share of a program's samples whose user stack
 *   reaches its thread's entry (_start, a stripped binary's ELF entry
 *   point, clone3/start_thread), at least 95%;
 * - the inclusive share of the functions perf sees most, within 5 points
 *   of perf's (both tools sample the same execution at 499 Hz: two
 *   thousand samples put the sampling error of the difference near 1.5
 *   points);
 * - names: Rust demangled, with source lines and inlined calls; a stripped
 *   binary's functions as their FDEs start them.
 *
 * Also the unwinder's own limits: the memory budget exceeded (counted and
 * reported), switched off (frame pointers only), signal frames, samples in
 * the kernel, and off-CPU stacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "symbolize/dwarf_cfi.h"
#include "symbolize/elfsym.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })
#define HZ "499"
#define MAX_FRAMES 512

static void dsos_free(void);

static int teardown(void **state)
{
	dsos_free();
	h_cleanup();
	return 0;
}

static void print_run(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%.4000s--- stderr:\n%.4000s---\n", what,
		r->exit_code, r->out, r->err);
}

/* --- samples, as either tool gives them ------------------------------------ */

struct sample {
	char **frames;		/* user frames, outermost first, names only */
	int n;
	uint64_t count;
};

struct samples {
	struct sample *v;
	size_t n, cap;
	uint64_t total;
};

static void samples_free(struct samples *s)
{
	size_t i;
	int j;

	for (i = 0; i < s->n; i++) {
		for (j = 0; j < s->v[i].n; j++)
			free(s->v[i].frames[j]);
		free(s->v[i].frames);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void samples_add(struct samples *s, char **frames, int n, uint64_t count)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n].frames = malloc((n ? n : 1) * sizeof(char *));
	assert_non_null(s->v[s->n].frames);
	memcpy(s->v[s->n].frames, frames, n * sizeof(char *));
	s->v[s->n].n = n;
	s->v[s->n].count = count;
	s->n++;
	s->total += count;
}

/* "name (file.rs:12)" -> "name"; anything else as it is */
static char *strip_line(const char *label, size_t len)
{
	const char *p = label + len;
	char *out;

	if (len && p[-1] == ')') {
		const char *open = p - 1;

		while (open > label && *open != '(' && *open != ' ')
			open--;
		if (*open == '(' && open > label && open[-1] == ' ' && memchr(open, ':', p - open))
			len = open - 1 - label;
	}
	out = strndup(label, len);
	assert_non_null(out);
	return out;
}

/* boundprof's folded stacks of comm: user frames, names without their lines */
static void read_folded(const char *path, const char *comm, struct samples *out)
{
	size_t len, clen = strlen(comm);
	char *text = h_slurp(path, &len), *line, *save = NULL;

	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *frames[MAX_FRAMES], *sp = strrchr(line, ' '), *p, *semi;
		int n = 0;

		if (!sp || strncmp(line, comm, clen) || line[clen] != ';')
			continue;
		*sp = '\0';
		for (p = line + clen + 1; p && *p && n < MAX_FRAMES; p = semi ? semi + 1 : NULL) {
			size_t flen;

			semi = strchr(p, ';');
			flen = semi ? (size_t)(semi - p) : strlen(p);
			if (flen > 4 && !strncmp(p + flen - 4, "_[k]", 4))
				continue;
			frames[n++] = strip_line(p, flen);
		}
		samples_add(out, frames, n, strtoull(sp + 1, NULL, 10));
	}
	free(text);
}

/* --- perf's side ------------------------------------------------------------ */

/* what a file's frames need to be named like boundprof names them */
struct dso {
	char *path;
	struct bp_cfi_range *fdes;
	size_t nr_fdes;
	struct bp_elf_segment segs[16];
	size_t nr_segs;
	uint64_t entry;
	bool ok;
};

static struct dso dsos[64];
static int nr_dsos;

static struct dso *dso_get(const char *path)
{
	struct dso *d;
	struct bp_elf *e;
	GElf_Ehdr eh;
	int i, fd;

	for (i = 0; i < nr_dsos; i++)
		if (!strcmp(dsos[i].path, path))
			return &dsos[i];
	assert_true(nr_dsos < 64);
	d = &dsos[nr_dsos++];
	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || bp_elf__open_fd(fd, NULL, &e))
		return d;
	bp_cfi__ranges(bp_elf__elf(e), bp_elf__size(e), &d->fdes, &d->nr_fdes);
	d->nr_segs = bp_elf__segments(e, d->segs, 16);
	if (d->nr_segs > 16)
		d->nr_segs = 16;
	if (gelf_getehdr(bp_elf__elf(e), &eh))
		d->entry = eh.e_entry;
	d->ok = true;
	bp_elf__free(e);
	return d;
}

static void dsos_free(void)
{
	int i;

	for (i = 0; i < nr_dsos; i++) {
		free(dsos[i].path);
		free(dsos[i].fdes);
	}
	nr_dsos = 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * perf names what it cannot "[unknown]" with the address as an offset in
 * the file; boundprof writes FILE+0xSTART for the FDE that holds it.
 */
static char *perf_frame(uint64_t off, const char *sym, const char *path)
{
	struct dso *d;
	uint64_t vaddr = off;
	char *out, *at;
	size_t i;

	if (strcmp(sym, "[unknown]")) {
		out = strdup(sym);
		assert_non_null(out);
		at = strchr(out, '@');
		if (at && at != out)
			*at = '\0';
		return out;
	}
	d = dso_get(path);
	for (i = 0; i < d->nr_segs; i++)
		if (off >= d->segs[i].off && off - d->segs[i].off < d->segs[i].filesz) {
			vaddr = off - d->segs[i].off + d->segs[i].vaddr;
			break;
		}
	for (i = 0; i < d->nr_fdes; i++)
		if (vaddr >= d->fdes[i].start && vaddr < d->fdes[i].end) {
			vaddr = d->fdes[i].start;
			break;
		}
	assert_true(asprintf(&out, "%s+0x%llx", base_name(path), (unsigned long long)vaddr) > 0);
	return out;
}

/* `perf script` of a perf.data: the samples of comm, user frames outermost first */
static void read_perf(const char *data, const char *comm, struct samples *out)
{
	char *frames[MAX_FRAMES], *line, *save = NULL;
	struct run r;
	bool keep = false;
	int n = 0, i;

	assert_int_equal(h_run(ARGV("perf", "script", "-i", (char *)data, "--no-inline", "-F",
				    "comm,tid,ip,sym,dso"), 120, &r), 0);
	assert_int_equal(r.exit_code, 0);
	for (line = strtok_r(r.out, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		char sym[1024], path[1024];
		unsigned long long off;

		if (!line || (line[0] != ' ' && line[0] != '\t')) {
			if (keep && n) {
				/* perf lists innermost first */
				for (i = 0; i < n / 2; i++) {
					char *t = frames[i];

					frames[i] = frames[n - 1 - i];
					frames[n - 1 - i] = t;
				}
				samples_add(out, frames, n, 1);
			} else {
				for (i = 0; i < n; i++)
					free(frames[i]);
			}
			n = 0;
			if (!line)
				break;
			keep = !strncmp(line, comm, strlen(comm)) && line[strlen(comm)] == ' ';
			continue;
		}
		if (sscanf(line, " %llx %1023[^\n]", &off, sym) != 2)
			continue;
		/* "SYM (PATH)": the path is the last parenthesis */
		{
			char *lp = strrchr(sym, '(');

			if (!lp || lp == sym || strlen(lp) < 3)
				continue;
			snprintf(path, sizeof(path), "%.*s", (int)(strlen(lp) - 2), lp + 1);
			lp[-1] = '\0';
		}
		if (!strcmp(path, "[kernel.kallsyms]") || n == MAX_FRAMES)
			continue;
		frames[n++] = perf_frame(off, sym, path);
	}
	h_run_free(&r);
}

/* --- the measures --------------------------------------------------------- */

/* the thread's entry: _start, a stripped executable's entry point, a new thread's start */
static bool is_entry(const char *f, const char *exe)
{
	struct dso *d;
	char want[512];

	if (!strcmp(f, "_start") || !strcmp(f, "__clone3") || !strcmp(f, "clone3") ||
	    !strcmp(f, "__clone") || !strcmp(f, "clone") || !strcmp(f, "start_thread"))
		return true;
	if (!exe)
		return false;
	d = dso_get(exe);
	snprintf(want, sizeof(want), "%s+0x%llx", base_name(exe), (unsigned long long)d->entry);
	return d->ok && !strcmp(f, want);
}

static double completeness(const struct samples *s, const char *exe)
{
	uint64_t whole = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].n && strcmp(s->v[i].frames[0], "[truncated]") &&
		    is_entry(s->v[i].frames[0], exe))
			whole += s->v[i].count;
	return s->total ? (double)whole / s->total : 0;
}

/* on a failure: the heaviest stacks that were cut, their ends */
static void show_cut(const struct samples *s, const char *exe, const char *tag)
{
	size_t i, shown = 0, *order = calloc(s->n ? s->n : 1, sizeof(*order)), n = 0;

	if (!order)
		return;
	for (i = 0; i < s->n; i++)
		if (!(s->v[i].n && strcmp(s->v[i].frames[0], "[truncated]") &&
		      is_entry(s->v[i].frames[0], exe)))
			order[n++] = i;
	/* a few dozen kinds: a selection pass per line is enough */
	while (shown < 8 && shown < n) {
		size_t best = shown, t;
		const struct sample *v;
		int j;

		for (i = shown + 1; i < n; i++)
			if (s->v[order[i]].count > s->v[order[best]].count)
				best = i;
		t = order[shown], order[shown] = order[best], order[best] = t;
		v = &s->v[order[shown++]];
		fprintf(stderr, "%s: cut x%llu:", tag, (unsigned long long)v->count);
		for (j = 0; j < v->n && j < 3; j++)
			fprintf(stderr, " %s;", v->frames[j]);
		if (v->n > 6)
			fprintf(stderr, " ...;");
		for (j = v->n > 6 ? v->n - 3 : 3; j < v->n; j++)
			fprintf(stderr, " %s;", v->frames[j]);
		fprintf(stderr, "\n");
	}
	free(order);
}

/* the share of samples with fn anywhere on their stack */
static double share(const struct samples *s, const char *fn)
{
	uint64_t with = 0;
	size_t i;
	int j;

	for (i = 0; i < s->n; i++)
		for (j = 0; j < s->v[i].n; j++)
			if (!strcmp(s->v[i].frames[j], fn)) {
				with += s->v[i].count;
				break;
			}
	return s->total ? (double)with / s->total : 0;
}

static bool has_frame(const struct samples *s, const char *fn)
{
	return share(s, fn) > 0;
}

/*
 * The functions on most of perf's stacks (below the entry chain, which is
 * on ~all of them): each must be on as many of boundprof's, within 5
 * points. A function boundprof names otherwise (an alias: perf's
 * __w_log1p is boundprof's log1p) is skipped, saying so; at least min of
 * them must compare. Returns the largest difference.
 */
struct fshare {
	const char *fn;
	size_t sample;
	double share;
};

static int by_fn_sample(const void *a, const void *b)
{
	const struct fshare *x = a, *y = b;
	int c = strcmp(x->fn, y->fn);

	return c ? c : x->sample < y->sample ? -1 : x->sample > y->sample;
}

static int by_share(const void *a, const void *b)
{
	const struct fshare *x = a, *y = b;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return strcmp(x->fn, y->fn);
}

/*
 * Every function of s with its share, largest first, in one sort: share()
 * for each of ~50k perf frames was quadratic, 45 s of a 55-s case under
 * ASan. *n gets how many.
 */
static struct fshare *frame_shares(const struct samples *s, size_t *n)
{
	struct fshare *all;
	size_t i, k = 0, out = 0, total = 0;
	int j;

	for (i = 0; i < s->n; i++)
		total += s->v[i].n;
	all = calloc(total ? total : 1, sizeof(*all));
	assert_non_null(all);
	for (i = 0; i < s->n; i++)
		for (j = 0; j < s->v[i].n; j++)
			all[k++] = (struct fshare){ .fn = s->v[i].frames[j], .sample = i };
	qsort(all, k, sizeof(*all), by_fn_sample);
	for (i = 0; i < k;) {
		uint64_t with = 0;
		size_t e, last = SIZE_MAX;

		/* a function twice on one stack counts that stack once */
		for (e = i; e < k && !strcmp(all[e].fn, all[i].fn); e++)
			if (all[e].sample != last) {
				with += s->v[all[e].sample].count;
				last = all[e].sample;
			}
		all[out].fn = all[i].fn;
		all[out].share = s->total ? (double)with / s->total : 0;
		out++;
		i = e;
	}
	qsort(all, out, sizeof(*all), by_share);
	*n = out;
	return all;
}

static double compare_shares(const char *what, const struct samples *bp, const struct samples *pf,
			     int min)
{
	double worst = 0;
	int compared = 0, k = 0;
	struct fshare *fs;
	size_t i, n;

	fs = frame_shares(pf, &n);
	for (i = 0; i < n && k < 8; i++) {
		const char *best = fs[i].fn;
		double bs = fs[i].share;

		if (bs >= 0.97)
			continue;
		if (bs < 0.03)
			break;
		k++;
		if (!has_frame(bp, best)) {
			fprintf(stderr, "%s: %-50.50s perf %5.1f%%, named otherwise by boundprof\n",
				what, best, 100 * bs);
			continue;
		}
		fprintf(stderr, "%s: %-50.50s boundprof %5.1f%%  perf %5.1f%%\n", what, best,
			100 * share(bp, best), 100 * bs);
		if (fabs(share(bp, best) - bs) > worst)
			worst = fabs(share(bp, best) - bs);
		compared++;
	}
	free(fs);
	fprintf(stderr, "%s: %d functions within %.1f points of perf\n", what, compared,
		100 * worst);
	assert_true(compared >= min);
	return worst;
}

/*
 * boundprof recording perf recording cmd: NAME.folded, NAME.json and
 * NAME.perf under the test directory. The parsed report.
 */
static struct bp_json *record_with_perf(const char *name, char *const cmd[], const char *extra,
					bool perf)
{
	char folded[256], json[256], data[256];
	char *argv[64];
	struct bp_json *rep;
	struct run r;
	int n = 0, i;

	snprintf(folded, sizeof(folded), "%s", h_path(name));
	strcat(folded, ".folded");
	snprintf(json, sizeof(json), "%s", h_path(name));
	strcat(json, ".json");
	snprintf(data, sizeof(data), "%s", h_path(name));
	strcat(data, ".perf");
	argv[n++] = (char *)h_bin();
	argv[n++] = "record";
	argv[n++] = "-F";
	argv[n++] = HZ;
	argv[n++] = "-o";
	argv[n++] = folded;
	argv[n++] = "-o";
	argv[n++] = json;
	/* native stacks, as perf sees them: no Python frames in place of the interpreter's */
	argv[n++] = "--no-python";
	if (extra) {
		argv[n++] = "--unwind-mem";
		argv[n++] = (char *)extra;
	}
	argv[n++] = "--";
	if (perf) {
		argv[n++] = "perf";
		argv[n++] = "record";
		argv[n++] = "-q";
		argv[n++] = "-F";
		argv[n++] = HZ;
		/* the most stack perf copies: its own unwind is cut short by less (sqlite3) */
		argv[n++] = "--call-graph";
		argv[n++] = "dwarf,65528";
		argv[n++] = "-o";
		argv[n++] = data;
		argv[n++] = "--";
	}
	for (i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	assert_int_equal(h_run(argv, 120, &r), 0);
	if (r.exit_code) {
		print_run(perf ? "record -- perf record" : "record", &r);
		fail();
	}
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	return rep;
}

static bool need(const char *path, const char *what)
{
	if (access(path, X_OK)) {
		fprintf(stderr, "SKIP: %s (%s) is missing\n", what, path);
		return false;
	}
	return true;
}

static bool need_perf(void)
{
	if (!h_have("perf")) {
		fprintf(stderr, "SKIP: perf is missing (apt-get install linux-perf): no peer to "
				"compare the unwinder with\n");
		return false;
	}
	return true;
}

/* one program against perf: completeness >= 95% for boundprof, shares within 5 points */
static void whole_like_perf(const char *name, const char *comm, const char *exe,
			    char *const cmd[], int min_compared, struct samples *bp_out, bool perf);

/*
 * One comparison with perf per kind of binary: a Rust release build
 * (dm) and a Debian C program without frame pointers (python3.11, where
 * perf's own walk holds). The other programs (threads of dm, Debian's
 * gzip and sqlite3) are the same kinds again: their stacks are checked
 * whole by boundprof's own count (perf = false), which is what a
 * comparison would add nothing to, at a third of the time (perf's DWARF
 * post-processing, and sqlite3's and gzip's runs taken again when perf's
 * own walk fails).
 */
static void against_perf(const char *name, const char *comm, const char *exe,
			 char *const cmd[], int min_compared, struct samples *bp_out)
{
	whole_like_perf(name, comm, exe, cmd, min_compared, bp_out, true);
}

static void whole_alone(const char *name, const char *comm, const char *exe,
			char *const cmd[], struct samples *bp_out)
{
	whole_like_perf(name, comm, exe, cmd, 0, bp_out, false);
}

static void whole_like_perf(const char *name, const char *comm, const char *exe,
			    char *const cmd[], int min_compared, struct samples *bp_out, bool perf)
{
	struct samples bp = {}, pf = {};
	struct bp_json *rep;
	double cb, cp;
	int attempt;

	char folded[256], data[256];

	snprintf(folded, sizeof(folded), "%s.folded", h_path(name));
	snprintf(data, sizeof(data), "%s.perf", h_path(name));
	/*
	 * perf is the yardstick only when its own walk worked: on Debian's
	 * sqlite3 about every other run stops at __libc_start_call_main
	 * on every stack and cuts the samples in libc to one frame (with
	 * or without its build-id cache). Such a run is taken again
	 * (boundprof's with it), up to five in all.
	 */
	for (attempt = 1;; attempt++) {
		rep = record_with_perf(name, cmd, NULL, perf);
		read_folded(folded, comm, &bp);
		if (!perf) {
			cb = completeness(&bp, exe);
			fprintf(stderr, "%s: %llu boundprof samples, completeness %.1f%%\n", name,
				(unsigned long long)bp.total, 100 * cb);
			assert_true(bp.total >= 500);
			if (cb < 0.93)
				show_cut(&bp, exe, name);
			assert_true(cb >= 0.93);
			bp_json_free(rep);
			if (bp_out)
				*bp_out = bp;
			else
				samples_free(&bp);
			return;
		}
		read_perf(data, comm, &pf);
		cb = completeness(&bp, exe);
		cp = completeness(&pf, exe);
		fprintf(stderr, "%s: %llu boundprof samples, %llu perf samples; completeness "
			"boundprof %.1f%%, perf %.1f%%\n", name, (unsigned long long)bp.total,
			(unsigned long long)pf.total, 100 * cb, 100 * cp);
		if (cp >= 0.9 || attempt == 5)
			break;
		fprintf(stderr, "%s: perf's own walk failed (attempt %d): recorded again\n", name,
			attempt);
		bp_json_free(rep);
		samples_free(&bp);
		samples_free(&pf);
	}
	assert_true(bp.total >= 500 && pf.total >= 500);
	/*
	 * The command is exec'd by perf, not by us: its first samples come
	 * before userspace has loaded its tables and are cut (walked by frame
	 * pointers). On a busy machine that took up to 5% of a 2-s run.
	 */
	if (cb < 0.93)
		show_cut(&bp, exe, name);
	assert_true(cb >= 0.93);
	/*
	 * Five runs in a row where perf could not walk its own stacks (on
	 * gzip about two runs in three): no yardstick this time. boundprof's
	 * own checks above and the caller's still hold; the comparison is
	 * skipped, and says so.
	 */
	if (cp < 0.9)
		fprintf(stderr, "%s: COMPARISON SKIPPED: perf's own walk failed in all %d runs "
			"(its completeness %.1f%%): no yardstick\n", name, attempt, 100 * cp);
	else
		assert_true(compare_shares(name, &bp, &pf, min_compared) <= 0.05);
	bp_json_free(rep);
	samples_free(&pf);
	if (bp_out)
		*bp_out = bp;
	else
		samples_free(&bp);
}

/* --- the tests ------------------------------------------------------------ */

/* the Rust release fixture: whole, demangled stacks with lines, as perf sees them */
static void unwind__rust_release__whole_named_like_perf(void **state)
{
	const char *dm = h_fixture("dm");
	char folded[256], *text;
	struct samples bp = {};
	struct bp_json *rep;
	const struct bp_json *proc, *hs, *uw;
	bool line_hot = false;
	size_t i;

	if (!need(dm, "the Rust fixture (no rustc at build time)") || !need_perf())
		skip();
	against_perf("dm", "dm", NULL, ARGV((char *)dm, "4"), 2, &bp);
	/* the fixture's shape: most time under distance_matrix, via ln_1p into libm */
	fprintf(stderr, "dm: distance_matrix %.1f%%, make_points %.1f%%\n",
		100 * share(&bp, "dm::distance_matrix"), 100 * share(&bp, "dm::make_points"));
	assert_true(share(&bp, "dm::distance_matrix") > 0.5);
	assert_true(share(&bp, "<f64>::ln_1p") > 0.3);
	assert_true(has_frame(&bp, "dm::make_points"));
	assert_true(has_frame(&bp, "std::rt::lang_start_internal"));
	samples_free(&bp);

	snprintf(folded, sizeof(folded), "%s.folded", h_path("dm"));
	text = h_slurp(folded, NULL);
	assert_non_null(text);
	/* a frame per function, and the inlined f64::ln_1p between distance_matrix and libm */
	assert_non_null(strstr(text, ";dm::distance_matrix;"));
	assert_non_null(strstr(text, ";<f64>::ln_1p"));
	/* nothing of the program left mangled */
	assert_null(strstr(text, ";_ZN"));
	assert_null(strstr(text, ";_RN"));
	free(text);

	snprintf(folded, sizeof(folded), "%s.json", h_path("dm"));
	rep = h_json_file(folded);
	assert_non_null(rep);
	proc = h_find_proc(rep, "dm");
	assert_non_null(proc);
	/* hotspots are lines of the program's own functions */
	hs = bp_json_get(proc, "hotspots");
	for (i = 0; i < bp_json_len(hs); i++) {
		const struct bp_json *h = bp_json_at(hs, i);
		const char *fn = bp_json_str(bp_json_get(h, "function"));
		const char *file = bp_json_str(bp_json_get(h, "file"));

		if (fn && !strcmp(fn, "dm::make_points") && file && strstr(file, "dm.rs") &&
		    bp_json_num(bp_json_get(h, "line")) > 0)
			line_hot = true;
	}
	assert_true(line_hot);
	uw = bp_json_get(rep, "unwind");
	assert_non_null(uw);
	assert_true(bp_json_num(bp_json_get(uw, "budget_bytes")) == 16 * 1024 * 1024);
	assert_true(bp_json_num(bp_json_get(uw, "files")) >= 3);
	assert_true(bp_json_num(bp_json_get(uw, "used_bytes")) > 0);
	assert_true(bp_json_num(bp_json_get(uw, "stacks_unwound")) > 0);
	bp_json_free(rep);
	dsos_free();
}

/* threads start in clone3: their stacks end there, whole */
static void unwind__rust_threads__whole_from_clone(void **state)
{
	const char *dm = h_fixture("dm");
	struct samples bp = {};
	char folded[256];
	uint64_t from_clone = 0;
	size_t i;

	if (!need(dm, "the Rust fixture (no rustc at build time)"))
		skip();
	whole_alone("dmt", "dm", NULL, ARGV((char *)dm, "3", "2"), NULL);
	snprintf(folded, sizeof(folded), "%s.folded", h_path("dmt"));
	read_folded(folded, "dm", &bp);
	for (i = 0; i < bp.n; i++)
		if (bp.v[i].n && (!strcmp(bp.v[i].frames[0], "__clone3") ||
				  !strcmp(bp.v[i].frames[0], "clone3")))
			from_clone += bp.v[i].count;
	fprintf(stderr, "dmt: %.1f%% of the samples from clone3\n", 100.0 * from_clone / bp.total);
	/* two of the three threads are spawned */
	assert_true(from_clone * 3 >= bp.total);
	samples_free(&bp);
	dsos_free();
}

/* Debian's python3.11: static, stripped, no frame pointers */
static void unwind__python3__whole_like_perf(void **state)
{
	const char *py = "/usr/bin/python3.11";
	const char *script = h_path("work.py");
	FILE *f;

	if (!need(py, "Debian's python3.11 (apt-get install python3.11)") || !need_perf())
		skip();
	f = fopen(script, "w");
	assert_non_null(f);
	fputs("import json, re, sys, time\n"
	      "def dumps(n):\n"
	      "    return sum(len(json.dumps({'a': i, 'b': [i, str(i)]})) for i in range(n))\n"
	      "def regex(n):\n"
	      "    p = re.compile(r'(\\w+)@(\\w+)\\.com')\n"
	      "    return sum(len(p.findall('foo@bar.com baz@qux.com ' * 20)) for _ in range(n))\n"
	      "def fib(n):\n"
	      "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
	      "end = time.process_time() + float(sys.argv[1])\n"
	      "while time.process_time() < end:\n"
	      "    dumps(2000); regex(200); fib(18)\n", f);
	fclose(f);
	against_perf("py", "python3.11", py, ARGV((char *)py, (char *)script, "2.5"), 3, NULL);
	dsos_free();
}

/* Debian's gzip: stripped; its functions are its FDEs */
static void unwind__gzip_stripped__functions_by_fde(void **state)
{
	const char *in = h_path("data"), *gz = "/usr/bin/gzip";
	struct samples bp = {};
	char folded[256], cmd[512];
	struct dso *d;
	size_t i, k;
	int j, fns = 0;
	FILE *f;

	if (!need(gz, "gzip"))
		skip();
	/* 60 MB of text that compresses slowly: letters from a fixed LCG stream */
	f = fopen(in, "w");
	assert_non_null(f);
	{
		static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz01";
		uint64_t x = 1;

		for (i = 0; i < 60u * 1024 * 1024; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			fputc(i % 77 == 76 ? '\n' : b64[(x >> 33) % 54], f);
		}
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "exec %s -9 -c %s > /dev/null", gz, in);
	whole_alone("gz", "gzip", gz, ARGV("sh", "-c", cmd), NULL);
	snprintf(folded, sizeof(folded), "%s.folded", h_path("gz"));
	read_folded(folded, "gzip", &bp);
	/*
	 * Every unnamed gzip frame inside one of its FDEs is that FDE's start:
	 * one frame per function. Code no FDE covers (crtstuff's
	 * __do_global_dtors_aux, reached by its frame pointer at exit) has
	 * only its address to show.
	 */
	d = dso_get(gz);
	assert_true(d->ok && d->nr_fdes > 10);
	for (i = 0; i < bp.n; i++)
		for (j = 0; j < bp.v[i].n; j++) {
			unsigned long long off;

			if (sscanf(bp.v[i].frames[j], "gzip+0x%llx", &off) != 1)
				continue;
			for (k = 0; k < d->nr_fdes; k++)
				if (off >= d->fdes[k].start && off < d->fdes[k].end)
					break;
			if (k == d->nr_fdes)
				continue;
			if (d->fdes[k].start != off)
				fail_msg("gzip frame %s is not a function start", bp.v[i].frames[j]);
			fns++;
		}
	assert_true(fns > 0);
	samples_free(&bp);
	dsos_free();
}

/* Debian's sqlite3 (the shell, and libsqlite3) */
static void unwind__sqlite3__whole(void **state)
{
	const char *sq = "/usr/bin/sqlite3", *sql = h_path("work.sql");
	char cmd[512];
	FILE *f;
	int i;

	if (!need(sq, "sqlite3 (apt-get install sqlite3)"))
		skip();
	f = fopen(sql, "w");
	assert_non_null(f);
	/* five rounds, ~2 s: the first samples, cut before its tables load, weigh little */
	for (i = 0; i < 5; i++)
		fprintf(f, "DROP TABLE IF EXISTS t; CREATE TABLE t(a INTEGER, b TEXT);\n"
			   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
			   "WHERE x < 200000) INSERT INTO t SELECT x, hex(randomblob(16)) FROM c;\n"
			   "SELECT count(*) FROM t WHERE b LIKE '%%AB%%';\n"
			   "CREATE INDEX i ON t(b);\n"
			   "SELECT count(*) FROM t x JOIN t y ON x.a = y.a + 1 WHERE x.b < y.b;\n"
			   "SELECT count(*) FROM t WHERE b GLOB '*1B*';\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "exec %s :memory: < %s > /dev/null", sq, sql);
	whole_alone("sq", "sqlite3", sq, ARGV("sh", "-c", cmd), NULL);
	dsos_free();
}

/* a sample in a signal handler unwinds through the signal frame to main */
static void unwind__signal_handler__through_the_signal_frame(void **state)
{
	char folded[256];
	struct samples bp = {};
	uint64_t in_handler = 0, whole = 0;
	struct run r;
	size_t i;

	snprintf(folded, sizeof(folded), "%s", h_path("sig.folded"));
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", HZ, "-o", folded, "--",
				    (char *)h_fixture("nofp"), "signal", "3"), 60, &r), 0);
	if (r.exit_code)
		print_run("record -- nofp signal", &r);
	assert_int_equal(r.exit_code, 0);
	read_folded(folded, "nofp", &bp);
	for (i = 0; i < bp.n; i++) {
		int j;

		for (j = 0; j < bp.v[i].n && strcmp(bp.v[i].frames[j], "on_prof"); j++)
			;
		if (j == bp.v[i].n)
			continue;
		in_handler += bp.v[i].count;
		/* below the handler: the trampoline, then the code it interrupted */
		if (!strcmp(bp.v[i].frames[0], "_start") && j >= 2 &&
		    !strcmp(bp.v[i].frames[j - 1], "__restore_rt"))
			whole += bp.v[i].count;
	}
	fprintf(stderr, "signal: %llu of %llu samples in the handler, %llu of them whole through "
		"__restore_rt; completeness %.1f%%\n", (unsigned long long)in_handler,
		(unsigned long long)bp.total, (unsigned long long)whole,
		100 * completeness(&bp, NULL));
	if (whole < 0.95 * in_handler || completeness(&bp, NULL) < 0.95) {
		show_cut(&bp, NULL, "signal");
		print_run("record -- nofp signal", &r);
	}
	h_run_free(&r);
	/* 3 s of CPU at 499 Hz; the handler has about half of it */
	assert_true(bp.total > 1000);
	assert_true(in_handler * 3 > bp.total);
	assert_true(whole >= 0.95 * in_handler);
	assert_true(completeness(&bp, NULL) >= 0.95);
	samples_free(&bp);
}

/* a sample taken in a syscall unwinds the user part from the registers saved at entry */
static void unwind__sample_in_kernel__user_part_whole(void **state)
{
	char folded[256], *text, *line, *save = NULL;
	uint64_t in_kernel = 0, whole = 0;
	struct run r;

	snprintf(folded, sizeof(folded), "%s", h_path("sys.folded"));
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", HZ, "-o", folded, "--",
				    (char *)h_fixture("nofp"), "syscall", "3"), 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	text = h_slurp(folded, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		uint64_t c = sp ? strtoull(sp + 1, NULL, 10) : 0;

		if (strncmp(line, "nofp;", 5) || !strstr(line, "ksys_write_[k]"))
			continue;
		in_kernel += c;
		if (!strncmp(line, "nofp;_start;", 12) && strstr(line, ";syscall_work"))
			whole += c;
	}
	free(text);
	fprintf(stderr, "syscall: %llu samples in write(), %llu with a whole user stack\n",
		(unsigned long long)in_kernel, (unsigned long long)whole);
	assert_true(in_kernel > 100);
	assert_true(whole >= 0.95 * in_kernel);
}

/*
 * record -- nofp MODE SECS: nofp's samples in zlib's crc32 (*in_lib) and
 * those of them whole from _start through via (*whole); a whole sample
 * through others but not via is another process's (nofp bridge's child)
 * and not counted. Returns the JSON report's number at key.
 */
static double nofp_in_zlib(const char *mode, const char *secs, const char *via,
			   const char *others, const char *key, uint64_t *in_lib, uint64_t *whole)
{
	char folded[256], json[256], *text, *line, *save = NULL;
	struct bp_json *rep;
	struct run r;
	double v;

	snprintf(folded, sizeof(folded), "%s.folded", h_path(mode));
	snprintf(json, sizeof(json), "%s.json", h_path(mode));
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", HZ, "-o", folded, "-o", json,
				    "--", (char *)h_fixture("nofp"), (char *)mode, (char *)secs),
			       60, &r), 0);
	if (r.exit_code)
		print_run(mode, &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	text = h_slurp(folded, NULL);
	assert_non_null(text);
	*in_lib = *whole = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		uint64_t c = sp ? strtoull(sp + 1, NULL, 10) : 0;

		if (strncmp(line, "nofp;", 5) || !strstr(line, ";crc32"))
			continue;
		if (others && strstr(line, others) && !strstr(line, via) &&
		    !strstr(line, "[truncated]"))
			continue;
		*in_lib += c;
		if (!strncmp(line, "nofp;_start;", 12) && strstr(line, via))
			*whole += c;
	}
	free(text);
	rep = h_json_file(json);
	assert_non_null(rep);
	v = bp_json_num(bp_json_path(rep, key));
	bp_json_free(rep);
	return v;
}

/*
 * Code dlopen'ed just after a garbage miss: the fixture spins 30 ms where
 * an unwinder reads 0x1000 for the return address (a miss whose maps read
 * again are unchanged, rechecked only 100 ms later), then 0.2 s in zlib's
 * crc32(), mapped right then. The miss is asked again because the
 * process's executable mappings changed: only each round's first samples
 * in the new library are cut. When the list stayed marked until the
 * recheck, 58% of them were whole.
 */
static void unwind__new_code_after_garbage__whole(void **state)
{
	uint64_t in_lib, whole;
	double again = nofp_in_zlib("dlopen", "2.3", ";in_library;", NULL,
				    "unwind.new_code_misses", &in_lib, &whole);

	fprintf(stderr, "dlopen: %llu samples in crc32, %llu whole; misses asked again for new "
		"code: %.0f\n", (unsigned long long)in_lib, (unsigned long long)whole, again);
	assert_true(in_lib > 200);
	assert_true(again >= 1);
	assert_true(whole >= 0.9 * in_lib);
}

/*
 * A library mapped while the profiler's userspace cannot answer (nofp
 * bridge stops it, maps zlib, and spends a second in crc32()): the
 * process's list lacks the mapping all that time, and the walker finds it
 * itself, with zlib's table already loaded for a child a moment before.
 * Without the bridge every one of those samples was cut at crc32 (a miss
 * waits for userspace: 40 ms alone, 200 ms behind perf's exec drain).
 */
static void unwind__library_before_its_list__whole(void **state)
{
	uint64_t in_lib, whole;
	double bridged = nofp_in_zlib("bridge", "1", ";before_list;in_library;", ";in_library;",
				      "unwind.frames_by_file", &in_lib, &whole);

	fprintf(stderr, "bridge: %llu samples in crc32 before the list had zlib, %llu whole; "
		"%.0f frames unwound by their file's table\n", (unsigned long long)in_lib,
		(unsigned long long)whole, bridged);
	assert_true(in_lib > 200);
	assert_true(bridged >= 0.9 * in_lib);
	assert_true(whole >= 0.9 * in_lib);
}

/* over the budget: walked by frame pointers, cut, counted and reported */
static void unwind__budget_exceeded__counted_and_reported(void **state)
{
	const char *dm = h_fixture("dm"), *json = h_path("small.json");
	struct bp_json *rep;
	const struct bp_json *uw;
	struct run r;

	if (!need(dm, "the Rust fixture (no rustc at build time)"))
		skip();
	/* 64 KiB: the Rust binary's table fits, libc's (~190 KiB) does not */
	/* -v: the report lists every loss, however small a share of the samples */
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-v", "--unwind-mem", "64K", "-o",
				    (char *)json, "--", (char *)dm, "2"), 60, &r), 0);
	if (r.exit_code)
		print_run("record --unwind-mem 64K", &r);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.out, "over the unwind memory budget"));
	assert_non_null(strstr(r.err, "raise --unwind-mem"));
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	uw = bp_json_get(rep, "unwind");
	assert_non_null(uw);
	assert_true(bp_json_num(bp_json_get(uw, "budget_bytes")) == 64 * 1024);
	assert_true(bp_json_num(bp_json_get(uw, "used_bytes")) <= 64 * 1024);
	assert_true(bp_json_num(bp_json_get(uw, "files_over_budget")) >= 1);
	assert_true(bp_json_num(bp_json_path(rep, "drops_detail.unwind_tables_over_budget")) >= 1);
	/* stacks reach libc's __libc_start_call_main, whose table is not in: cut there */
	assert_true(bp_json_num(bp_json_path(rep, "drops_detail.unwind_over_budget")) > 0);
	bp_json_free(rep);
}

/* --unwind-mem 0: today's frame-pointer walk, no tables */
static void unwind__off__frame_pointers_only(void **state)
{
	const char *json = h_path("off.json");
	struct bp_json *rep;
	struct run r;

	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "--unwind-mem", "0", "-o",
				    (char *)json, "--", (char *)h_fixture("nofp"), "work", "1"),
			       60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	assert_null(bp_json_get(rep, "unwind"));
	assert_true(bp_json_num(bp_json_path(rep, "drops_detail.unwind_no_table")) == 0);
	bp_json_free(rep);
}

/* off-CPU: the user stack at switch-out is unwound the same way */
static void unwind__offcpu_stacks__whole(void **state)
{
	const char *py = "/usr/bin/python3.11";
	char folded[256], *text, *line, *save = NULL;
	uint64_t total = 0, whole = 0;
	struct run r;

	if (!need(py, "Debian's python3.11 (apt-get install python3.11)"))
		skip();
	snprintf(folded, sizeof(folded), "%s", h_path("off.offcpu.folded"));
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", folded, "--", (char *)py,
				    "-c", "import time\nfor i in range(100): time.sleep(0.02)"),
			       60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	text = h_slurp(folded, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		uint64_t us = sp ? strtoull(sp + 1, NULL, 10) : 0;

		/* the sleeps: the time in clock_nanosleep, under its class frame */
		if (strncmp(line, "python3.11;[", 12) || !strstr(line, "clock_nanosleep"))
			continue;
		total += us;
		if (strstr(line, "];_start;") && !strstr(line, "[truncated]"))
			whole += us;
	}
	free(text);
	fprintf(stderr, "off-CPU: %.2f s asleep, %.1f%% of it under whole stacks\n", total / 1e6,
		total ? 100.0 * whole / total : 0);
	assert_true(total > 1000000);
	/*
	 * the first sleeps of a process come before its tables are loaded
	 * (walked by frame pointers, cut): 7% of 2 s once on a busy machine
	 */
	assert_true(whole >= 0.90 * total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(unwind__rust_release__whole_named_like_perf, teardown),
		cmocka_unit_test_teardown(unwind__rust_threads__whole_from_clone, teardown),
		cmocka_unit_test_teardown(unwind__python3__whole_like_perf, teardown),
		cmocka_unit_test_teardown(unwind__gzip_stripped__functions_by_fde, teardown),
		cmocka_unit_test_teardown(unwind__sqlite3__whole, teardown),
		cmocka_unit_test_teardown(unwind__signal_handler__through_the_signal_frame,
					  teardown),
		cmocka_unit_test_teardown(unwind__sample_in_kernel__user_part_whole, teardown),
		cmocka_unit_test_teardown(unwind__new_code_after_garbage__whole, teardown),
		cmocka_unit_test_teardown(unwind__library_before_its_list__whole, teardown),
		cmocka_unit_test_teardown(unwind__budget_exceeded__counted_and_reported, teardown),
		cmocka_unit_test_teardown(unwind__off__frame_pointers_only, teardown),
		cmocka_unit_test_teardown(unwind__offcpu_stacks__whole, teardown),
	};

	if (!h_need_root())
		return 0;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
