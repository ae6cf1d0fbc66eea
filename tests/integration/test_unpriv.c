// SPDX-License-Identifier: GPL-2.0
/*
 * Profiling without root, for real: a root agent on a socket of this
 * test's own and a free port; two users made for the test (setpriv, no
 * capabilities, no supplementary groups) record through it. Each gets the
 * verdict and the functions root gets for the same program, recorded at
 * the same time; each is refused, in one line, the other's process,
 * cgroup and top; neither sees the other's names, command lines or
 * functions anywhere, -g user included; one user hitting every limit at
 * once leaves root's /metrics and the other user's recording whole; and
 * `nobody` gets no process name, command line or stack from any HTTP
 * endpoint of an agent on its defaults. The users, their cgroup and every
 * process are removed in the teardown, whatever failed.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })
/* alpha does 3 units of work for each of beta's: tests/fixtures/split.c */
#define SPLIT_ALPHA 0.75
#define SPLIT_BETA 0.25

struct user {
	char name[32];
	char dir[512];		/* theirs, 0700 */
	char bin[512];		/* their copy of the fixture, named after them */
	char comm[16];
	bool made;
};

static struct user ua, ub;
static char cgdir[400];
static char group[32];		/* a group made for the test, "" none */
static pid_t agent_pid = -1;
static int agent_port;
static char agent_sock[512], agent_log[512];

/* where the cgroup v2 tree is mounted (/sys/fs/cgroup, or .../unified on a hybrid host) */
static const char *v2_mount(void)
{
	static char mp[256];
	char line[1024], fstype[64];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	assert_non_null(f);
	while (!mp[0] && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");
		char m[256];

		if (sep && sscanf(line, "%*s %*s %*s %*s %255s", m) == 1 &&
		    sscanf(sep + 3, "%63s", fstype) == 1 && !strcmp(fstype, "cgroup2"))
			snprintf(mp, sizeof(mp), "%s", m);
	}
	fclose(f);
	if (!mp[0])
		fail_msg("no cgroup v2 tree mounted: -G of another user's cgroup needs one");
	return mp;
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* a shell command that must succeed */
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		fprintf(stderr, "failed (%d): %s\n", rc, cmd);
	assert_int_equal(rc, 0);
}

static void user_make(struct user *u, const char *tag, const char *fixture)
{
	snprintf(u->name, sizeof(u->name), "bp27%s%d", tag, (int)(getpid() % 100000));
	snprintf(u->comm, sizeof(u->comm), "secret_%s", tag);
	sh("useradd -M -U -s /usr/sbin/nologin %s", u->name);
	u->made = true;
	snprintf(u->dir, sizeof(u->dir), "%s", h_path(u->name));
	snprintf(u->bin, sizeof(u->bin), "%s/%s", h_tmpdir(), u->comm);
	sh("mkdir -m 0700 %s && chown %s: %s && cp %s %s && chmod 0755 %s", u->dir, u->name,
	   u->dir, h_fixture(fixture), u->bin, u->bin);
}

static void user_drop(struct user *u)
{
	char cmd[256];

	if (!u->made)
		return;
	/* whatever of theirs is left first: userdel refuses a user with processes */
	snprintf(cmd, sizeof(cmd), "pkill -KILL -u %s; sleep 0.2; userdel %s", u->name, u->name);
	if (system(cmd))
		fprintf(stderr, "warning: could not remove user %s\n", u->name);
	u->made = false;
}

static void agent_stop(void)
{
	if (agent_pid > 0) {
		kill(agent_pid, SIGTERM);
		waitpid(agent_pid, NULL, 0);
		agent_pid = -1;
	}
}

static int setup(void **state)
{
	/* the users reach the socket and their copies; what is inside keeps its modes */
	if (chmod(h_tmpdir(), 0711))
		return -1;
	memset(&ua, 0, sizeof(ua));
	memset(&ub, 0, sizeof(ub));
	cgdir[0] = '\0';
	group[0] = '\0';
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	agent_stop();
	h_cleanup();
	user_drop(&ua);
	user_drop(&ub);
	if (group[0]) {
		snprintf(cmd, sizeof(cmd), "groupdel %s", group);
		if (system(cmd))
			fprintf(stderr, "warning: could not remove group %s\n", group);
		group[0] = '\0';
	}
	unsetenv("BOUNDPROF_SOCKET");
	if (cgdir[0]) {
		snprintf(cmd, sizeof(cmd), "rmdir %s", cgdir);
		if (system(cmd))
			fprintf(stderr, "warning: could not remove %s\n", cgdir);
		cgdir[0] = '\0';
	}
	return 0;
}

/*
 * The agent, on a socket in a directory of the test's that it makes itself
 * (as /run/boundprof by default), and a free port.
 */
static void agent_start(const char *opts)
{
	double deadline = h_now() + 60;
	char cmd[2048], *text, *p;

	snprintf(agent_sock, sizeof(agent_sock), "%s/agent.sock", h_path("run"));
	snprintf(agent_log, sizeof(agent_log), "%s", h_path("agent.log"));
	snprintf(cmd, sizeof(cmd), "exec %s agent --listen 127.0.0.1:0 --socket %s --dir %s "
		 "--interval 2 %s >>%s 2>&1", h_bin(), agent_sock, h_path("windows"), opts,
		 agent_log);
	agent_pid = h_spawn(ARGV("sh", "-c", cmd), NULL);
	assert_true(agent_pid > 0);
	agent_port = 0;
	/* ready once it says where users profile: the socket is up, the session too */
	while (h_now() < deadline) {
		h_sleep(0.1);
		text = h_slurp(agent_log, NULL);
		p = text ? strstr(text, "(port ") : NULL;
		if (p && strstr(text, "windows of"))
			agent_port = atoi(p + 6);
		free(text);
		if (agent_port || waitpid(agent_pid, NULL, WNOHANG) == agent_pid)
			break;
	}
	if (!agent_port) {
		text = h_slurp(agent_log, NULL);
		fprintf(stderr, "agent did not start:\n%s\n", text ? text : "(no log)");
		free(text);
	}
	assert_true(agent_port > 0);
	setenv("BOUNDPROF_SOCKET", agent_sock, 1);
}

/* boundprof ARGS as user u (no capabilities, no groups), in their directory */
static int as(const struct user *u, const char *args, double timeout_s, struct run *r)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "cd %s && exec %s %s", u->dir, h_bin(), args);
	return h_run(ARGV("setpriv", "--reuid", (char *)u->name, "--regid", (char *)u->name,
			  "--clear-groups", "sh", "-c", cmd), timeout_s, r);
}

static pid_t as_spawn(const struct user *u, const char *args, int *out, int *err)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "cd %s && exec %s", u->dir, args);
	return h_spawn2(ARGV("setpriv", "--reuid", (char *)u->name, "--regid", (char *)u->name,
			     "--clear-groups", "sh", "-c", cmd), out, err);
}

/* text holds none of what is other's */
static void none_of(const char *what, const char *text, const char *const *secrets, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (text && strstr(text, secrets[i])) {
			fprintf(stderr, "%s shows '%s':\n%s\n", what, secrets[i], text);
			fail();
		}
	}
}

/* exactly one line on stderr, holding want, and the exit status */
static void refused(const char *what, const struct run *r, int status, const char *want)
{
	fprintf(stderr, "%s -> exit %d: %s", what, r->exit_code, r->err);
	assert_int_equal(r->exit_code, status);
	assert_int_equal(h_lines(r->err), 1);
	assert_non_null(strstr(r->err, want));
}

static const struct bp_json *proc_of(const struct bp_json *rep, const char *comm)
{
	const struct bp_json *p = h_find_proc(rep, comm);

	if (!p)
		fprintf(stderr, "no process %s in the report\n", comm);
	assert_non_null(p);
	return p;
}

/* every process of the report is u's */
static void only_theirs(const struct bp_json *rep, const struct user *u)
{
	const struct bp_json *procs = bp_json_get(rep, "processes");
	size_t i;

	assert_true(bp_json_len(procs) >= 1);
	for (i = 0; i < bp_json_len(procs); i++) {
		const char *user = bp_json_str(bp_json_get(bp_json_at(procs, i), "user"));

		if (!user || strcmp(user, u->name)) {
			fprintf(stderr, "process of %s in %s's report\n", user ? user : "?",
				u->name);
			fail();
		}
	}
}

/*
 * How far a share of a process's samples may be from the work's: the
 * sampling error of n samples (three standard deviations of a binomial
 * share), never less than the harness's margin
 */
static double margin(const struct bp_json *proc, double share)
{
	double n = bp_json_num(bp_json_get(proc, "samples"));
	double m = n > 0 ? 3 * sqrt(share * (1 - share) / n) : 1;

	return m > H_SHARE_MARGIN ? m : H_SHARE_MARGIN;
}

static void split_ok(const char *who, const struct bp_json *p)
{
	double a = h_hotspot_self(p, "alpha"), b = h_hotspot_self(p, "beta");

	fprintf(stderr, "%s: alpha %.3f beta %.3f of %.0f samples (work: %.2f/%.2f, margin %.3f)\n",
		who, a, b, bp_json_num(bp_json_get(p, "samples")), SPLIT_ALPHA, SPLIT_BETA,
		margin(p, SPLIT_ALPHA));
	assert_true(fabs(a - SPLIT_ALPHA) <= margin(p, SPLIT_ALPHA));
	assert_true(fabs(b - SPLIT_BETA) <= margin(p, SPLIT_BETA));
}

/* verdict and functions of comm in a user's report, against root's of the same program */
static void same_as_root(const char *who, const struct bp_json *mine, const struct bp_json *root)
{
	const char *vm = bp_json_str(bp_json_get(bp_json_get(mine, "verdict"), "class"));
	const char *vr = bp_json_str(bp_json_get(bp_json_get(root, "verdict"), "class"));

	h_show_verdict(who, mine);
	h_show_verdict("root", root);
	assert_non_null(vm);
	assert_non_null(vr);
	assert_string_equal(vm, vr);
	split_ok(who, mine);
	split_ok("root", root);
}

static struct bp_json *json_of(const char *path)
{
	struct bp_json *j = h_json_file(path);

	assert_non_null(j);
	return j;
}

/*
 * Both users and root record the same split program at the same time:
 * the users through the agent, root with its own BPF. Same verdict, same
 * functions; each report holds its user's processes only.
 */
static void test_users_record_their_own(void **state)
{
	const char *const not_a[] = { "secret_b", ub.name }, *const not_b[] = { "secret_a", ua.name };
	char args[1024], root_json[512], path[600];
	struct run ra, rb, rr;
	pid_t pa, pb;
	int oa, ea, ob, eb;
	struct bp_json *ja, *jb, *jr;
	char *folded;

	user_make(&ua, "a", "split");
	user_make(&ub, "b", "split");
	agent_start("");
	snprintf(root_json, sizeof(root_json), "%s", h_path("root.json"));
	snprintf(args, sizeof(args), "%s record -o a.json -o a.folded -- %s 2", h_bin(), ua.bin);
	pa = as_spawn(&ua, args, &oa, &ea);
	snprintf(args, sizeof(args), "%s record -o b.json -o b.folded -- %s 2", h_bin(), ub.bin);
	pb = as_spawn(&ub, args, &ob, &eb);
	/* root's run of the same program, meanwhile: a third copy, run by root */
	snprintf(path, sizeof(path), "%s/secret_root", h_tmpdir());
	sh("cp %s %s", h_fixture("split"), path);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", root_json, "--", path, "2"),
			       120, &rr), 0);
	assert_int_equal(rr.exit_code, 0);
	h_run_free(&rr);
	assert_int_equal(h_wait(pa, oa, ea, 120, &ra), 0);
	assert_int_equal(h_wait(pb, ob, eb, 120, &rb), 0);
	fprintf(stderr, "user a: exit %d\n%s%s\nuser b: exit %d\n%s%s\n", ra.exit_code, ra.out,
		ra.err, rb.exit_code, rb.out, rb.err);
	assert_int_equal(ra.exit_code, 0);
	assert_int_equal(rb.exit_code, 0);
	/* the report says where it came from */
	assert_non_null(strstr(ra.out, "through the boundprof agent"));
	none_of("a's report", ra.out, not_a, 2);
	none_of("b's report", rb.out, not_b, 2);
	none_of("a's stderr", ra.err, not_a, 2);
	none_of("b's stderr", rb.err, not_b, 2);

	snprintf(path, sizeof(path), "%s/a.json", ua.dir);
	ja = json_of(path);
	snprintf(path, sizeof(path), "%s/b.json", ub.dir);
	jb = json_of(path);
	jr = json_of(root_json);
	only_theirs(ja, &ua);
	only_theirs(jb, &ub);
	same_as_root("user a", proc_of(ja, "secret_a"), proc_of(jr, "secret_root"));
	same_as_root("user b", proc_of(jb, "secret_b"), proc_of(jr, "secret_root"));
	snprintf(path, sizeof(path), "%s/a.folded", ua.dir);
	folded = h_slurp(path, NULL);
	assert_non_null(folded);
	none_of("a's folded stacks", folded, not_a, 2);
	assert_non_null(strstr(folded, "alpha"));
	free(folded);
	bp_json_free(ja);
	bp_json_free(jb);
	bp_json_free(jr);
	h_run_free(&ra);
	h_run_free(&rb);

	/* stopped, the agent takes its socket away, and the directory it made for it */
	agent_stop();
	assert_int_equal(access(agent_sock, F_OK), -1);
	assert_int_equal(access(h_path("run"), F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

/*
 * A's program runs in a cgroup of A's; B asks for it by pid, by cgroup
 * and with top: three refusals of one line each. B's own views (record
 * -a, -g user, top) show nothing of A's.
 */
/* the "Process" and "Thread N (comm)" lines of a dump's text, in order */
static void dump_heads(const char *text, char *out, size_t size)
{
	const char *l;
	size_t o = 0;

	out[0] = '\0';
	for (l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\n");
		const char *colon = memchr(l, ':', n);

		if ((!strncmp(l, "Process ", 8) || !strncmp(l, "Thread ", 7)) && colon &&
		    o + (colon - l) + 2 < size) {
			memcpy(out + o, l, colon - l);
			o += colon - l;
			out[o++] = '\n';
			out[o] = '\0';
		}
	}
}

/*
 * A dumps its own process through the agent: the process and threads
 * root's dump shows, text and JSON, said to come through the agent; a
 * second dump at once is either a second later or refused by the limit.
 */
static void dump_own(pid_t pid)
{
	char args[128], mine[4096], roots[4096], pids[16], why[128];
	struct timespec t0, t1;
	struct bp_json *j;
	struct run r, r2, rr;
	double span;

	snprintf(pids, sizeof(pids), "%d", (int)pid);
	snprintf(args, sizeof(args), "dump -p %d", (int)pid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(as(&ua, args, 60, &r), 0);
	/* a second at once: refused by the limit, unless a second went by since the first */
	snprintf(args, sizeof(args), "dump -p %d --json", (int)pid);
	assert_int_equal(as(&ua, args, 60, &r2), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	span = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "a: dump -p %d -> exit %d\n%s%s", (int)pid, r.exit_code, r.out, r.err);
	fprintf(stderr, "a: dump --json at once -> exit %d (both in %.2f s): %s", r2.exit_code,
		span, r2.err);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.out, "through the boundprof agent"));
	if (r2.exit_code)
		refused("a: a second dump at once", &r2, 1, "one dump a second");
	else
		assert_true(span >= 1.0);
	h_run_free(&r2);

	/* the process and threads root's own dump shows */
	assert_int_equal(h_run(ARGV((char *)h_bin(), "dump", "-p", pids), 60, &rr), 0);
	assert_int_equal(rr.exit_code, 0);
	dump_heads(r.out, mine, sizeof(mine));
	dump_heads(rr.out, roots, sizeof(roots));
	fprintf(stderr, "a's dump heads:\n%sroot's:\n%s", mine, roots);
	assert_non_null(strstr(mine, "secret_a"));
	assert_string_equal(mine, roots);
	h_run_free(&rr);
	h_run_free(&r);

	/* a second later, JSON: one document, the note on stderr */
	h_sleep(1.1);
	assert_int_equal(as(&ua, args, 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.err, "through the boundprof agent"));
	j = bp_json_parse(r.out, strlen(r.out), why, sizeof(why));
	if (!j)
		fprintf(stderr, "a's dump --json does not parse: %s\n%s\n", why, r.out);
	assert_non_null(j);
	assert_int_equal((int)bp_json_num(bp_json_get(j, "pid")), (int)pid);
	assert_true(bp_json_len(bp_json_get(j, "threads")) >= 1);
	bp_json_free(j);
	h_run_free(&r);
}

static void test_other_users_refused(void **state)
{
	const char *const not_b[] = { "secret_a", "spin_hot" };
	char args[1024], cg[256], line[64];
	struct run r;
	pid_t spin_a, spin_b;

	user_make(&ua, "a", "spin");
	user_make(&ub, "b", "spin");
	agent_start("");
	snprintf(args, sizeof(args), "%s 30", ua.bin);
	spin_a = as_spawn(&ua, args, NULL, NULL);
	snprintf(args, sizeof(args), "%s 30", ub.bin);
	spin_b = as_spawn(&ub, args, NULL, NULL);
	assert_true(spin_a > 0 && spin_b > 0);
	/* a cgroup of A's own, holding A's program */
	snprintf(cg, sizeof(cg), "/bp27-%d-a", (int)getpid());
	snprintf(cgdir, sizeof(cgdir), "%.200s%.150s", v2_mount(), cg);
	sh("mkdir %s && chown -R %s: %s && echo %d > %s/cgroup.procs", cgdir, ua.name, cgdir,
	   (int)spin_a, cgdir);
	h_sleep(2.5);

	snprintf(args, sizeof(args), "record -p %d -d 1", (int)spin_a);
	assert_int_equal(as(&ub, args, 60, &r), 0);
	refused("b: record -p A's pid", &r, 2, "not yours");
	h_run_free(&r);
	snprintf(args, sizeof(args), "record -G %s -d 1", cg);
	assert_int_equal(as(&ub, args, 60, &r), 0);
	refused("b: record -G A's cgroup", &r, 2, "not yours");
	h_run_free(&r);
	snprintf(args, sizeof(args), "top -G %s -n 1", cg);
	assert_int_equal(as(&ub, args, 60, &r), 0);
	refused("b: top -G A's cgroup", &r, 2, "not yours");
	h_run_free(&r);
	snprintf(args, sizeof(args), "dump -p %d", (int)spin_a);
	assert_int_equal(as(&ub, args, 60, &r), 0);
	refused("b: dump -p A's pid", &r, 2, "not yours");
	none_of("b's refused dump", r.out, not_b, 2);
	h_run_free(&r);
	/* and root's own processes, the same */
	assert_int_equal(as(&ub, "record -p 1 -d 1", 60, &r), 0);
	refused("b: record -p 1", &r, 2, "not yours");
	h_run_free(&r);
	assert_int_equal(as(&ub, "dump -p 1", 60, &r), 0);
	refused("b: dump -p 1", &r, 2, "not yours");
	h_run_free(&r);
	/* A may, for its own */
	snprintf(args, sizeof(args), "record -G %s -d 2 --json", cg);
	assert_int_equal(as(&ua, args, 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.out, "secret_a"));
	h_run_free(&r);
	dump_own(spin_a);

	/* B's whole views: its own spin only, by process and by user */
	assert_int_equal(as(&ub, "record -d 3 -g user", 60, &r), 0);
	fprintf(stderr, "b: record -d 3 -g user -> exit %d\n%s%s", r.exit_code, r.out, r.err);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.out, "secret_b"));
	none_of("b's -g user report", r.out, (const char *const[]){ "secret_a", ua.name }, 2);
	h_run_free(&r);
	assert_int_equal(as(&ub, "record -d 2 -g user -o g.folded --json", 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	none_of("b's -g user JSON", r.out, (const char *const[]){ "secret_a", ua.name }, 2);
	h_run_free(&r);
	snprintf(args, sizeof(args), "%s/g.folded", ub.dir);
	{
		char *f = h_slurp(args, NULL);

		assert_non_null(f);
		none_of("b's -g user folded", f, (const char *const[]){ "secret_a", ua.name }, 2);
		free(f);
	}
	assert_int_equal(as(&ub, "top -n 2 -i 1", 60, &r), 0);
	fprintf(stderr, "b: top -n 2 -> exit %d\n%s%s", r.exit_code, r.out, r.err);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(strstr(r.out, "secret_b"));
	none_of("b's top", r.out, not_b, 1);
	h_run_free(&r);
	assert_int_equal(as(&ub, "top -n 1 -i 1 -g user", 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	none_of("b's top -g user", r.out, (const char *const[]){ "secret_a", ua.name }, 2);
	h_run_free(&r);
	(void)line;
}

/* until the agent runs n recordings for users (root's /metrics says) */
static void wait_sessions(int n)
{
	double deadline = h_now() + 60;
	char *body = NULL, *p;
	size_t len;
	int status;

	while (h_now() < deadline) {
		assert_int_equal(h_http_get(agent_port, "/metrics", 30, &status, &body, &len), 0);
		static const char series[] = "\nboundprof_agent_local_sessions ";

		p = strstr(body, series);
		if (p && atoi(p + sizeof(series) - 1) >= n) {
			free(body);
			return;
		}
		free(body);
		h_sleep(0.2);
	}
	fail_msg("the agent never ran %d recordings for users", n);
}

/*
 * A hits every limit at once (frequency, sessions, length, memory) while
 * B records its program: B's recording is whole and right, root's
 * /metrics answers with every hit counted.
 */
static void test_limits_hit_by_one_user(void **state)
{
	char args[1024], path[600], *page, *body = NULL;
	struct run r, rb, rc;
	pid_t pb, pa;
	int ob, eb, oa, ea, status;
	struct bp_json *jb;
	size_t len;
	const char *const limits[] = { "sessions", "seconds", "freq", "memory" };
	int i;

	user_make(&ua, "a", "churn");
	user_make(&ub, "b", "split");
	/* B records 2 CPU-seconds: under a loaded machine that can take many more of wall time */
	agent_start("--user-sessions 1 --user-seconds 8 --user-freq 99 --user-mem 48K");

	/* A, length: a program that stays small, asked for longer than the 8 s allowed */
	snprintf(args, sizeof(args), "%s record -d 60 -- sleep 12", h_bin());
	pa = as_spawn(&ua, args, &oa, &ea);
	assert_true(pa > 0);
	wait_sessions(1);
	/* B: its program, through the rest */
	snprintf(args, sizeof(args), "%s record -o b.json -- %s 2", h_bin(), ub.bin);
	pb = as_spawn(&ub, args, &ob, &eb);
	assert_true(pb > 0);
	/* A, sessions: one at a time, and that one is running */
	assert_int_equal(as(&ua, "record -d 1", 60, &r), 0);
	fprintf(stderr, "a: second recording -> exit %d: %s", r.exit_code, r.err);
	assert_int_equal(r.exit_code, 1);
	assert_non_null(strstr(r.err, "recordings through the agent already"));
	h_run_free(&r);
	/* A, frequency */
	assert_int_equal(as(&ua, "record -F 199 -d 1", 60, &r), 0);
	refused("a: -F 199", &r, 2, "-F 99 or less");
	h_run_free(&r);
	assert_int_equal(h_wait(pa, oa, ea, 120, &rc), 0);
	fprintf(stderr, "a: record -- sleep 12 -> exit %d, stderr:\n%s", rc.exit_code, rc.err);
	assert_int_equal(rc.exit_code, 0);
	assert_non_null(strstr(rc.err, "ended after 8 s"));
	h_run_free(&rc);
	/* A, memory: hundreds of processes a second, each with its own facts */
	snprintf(args, sizeof(args), "record -d 60 -- %s 8 300", ua.bin);
	assert_int_equal(as(&ua, args, 120, &r), 0);
	fprintf(stderr, "a: churn recording -> exit %d, stderr:\n%s", r.exit_code, r.err);
	assert_non_null(strstr(r.err, "ended early"));
	h_run_free(&r);

	/* B's recording: whole, no note, the known split */
	assert_int_equal(h_wait(pb, ob, eb, 120, &rb), 0);
	fprintf(stderr, "b: exit %d, stderr: %s\n", rb.exit_code, rb.err);
	assert_int_equal(rb.exit_code, 0);
	assert_null(strstr(rb.err, "warning"));
	snprintf(path, sizeof(path), "%s/b.json", ub.dir);
	jb = json_of(path);
	split_ok("user b", proc_of(jb, "secret_b"));
	only_theirs(jb, &ub);
	bp_json_free(jb);
	h_run_free(&rb);

	/* root's /metrics: answered, with every process, and every hit counted */
	assert_int_equal(h_http_get(agent_port, "/metrics", 30, &status, &body, &len), 0);
	assert_int_equal(status, 200);
	page = body;
	assert_non_null(strstr(page, "boundprof_process_cpu_seconds{"));
	for (i = 0; i < 4; i++) {
		char series[128], *p;

		snprintf(series, sizeof(series),
			 "boundprof_agent_local_limit_hits_total{limit=\"%s\"} ", limits[i]);
		p = strstr(page, series);
		assert_non_null(p);
		fprintf(stderr, "%s%.0f\n", series, atof(p + strlen(series)));
		assert_true(atof(p + strlen(series)) >= 1);
	}
	free(body);
}

/*
 * An agent on its defaults (no token): `nobody` asks every endpoint and
 * gets no process name, command line or function of root's or a user's.
 */
static void test_nobody_over_http(void **state)
{
	static const char *const paths[] = { "/metrics", "/report", "/flamegraph",
					     "/debug/pprof/profile?seconds=1", "/", "/healthz",
					     "/nothing" };
	const char *const secrets[] = { "secret_a", "secret_root", "spin_hot", "comm=\"" };
	char script[1024], path[600];
	struct run r;
	size_t i;

	user_make(&ua, "a", "spin");
	agent_start("");
	snprintf(script, sizeof(script), "%s 30", ua.bin);
	assert_true(as_spawn(&ua, script, NULL, NULL) > 0);
	snprintf(path, sizeof(path), "%s/secret_root", h_tmpdir());
	sh("cp %s %s", h_fixture("spin"), path);
	assert_true(h_spawn(ARGV(path, "30"), NULL) > 0);
	/* a window with both in it */
	h_sleep(5);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(script, sizeof(script),
			 "exec 3<>/dev/tcp/127.0.0.1/%d && printf 'GET %s HTTP/1.1\\r\\nHost: x\\r\\n"
			 "Connection: close\\r\\n\\r\\n' >&3 && cat <&3", agent_port, paths[i]);
		assert_int_equal(h_run(ARGV("setpriv", "--reuid=nobody", "--regid=nogroup",
					    "--clear-groups", "bash", "-c", script), 60, &r), 0);
		fprintf(stderr, "nobody GET %s: %.*s (%zu bytes)\n", paths[i],
			(int)strcspn(r.out, "\r\n"), r.out, r.out_len);
		assert_true(r.out_len > 0);
		none_of(paths[i], r.out, secrets, 4);
		if (!strcmp(paths[i], "/healthz"))
			assert_non_null(strstr(r.out, " 200 "));
		h_run_free(&r);
	}
	/* root, on the same agent, sees them: the check above had something to find */
	{
		char *body = NULL;
		size_t len;
		int status;

		assert_int_equal(h_http_get(agent_port, "/report", 30, &status, &body, &len), 0);
		assert_int_equal(status, 200);
		assert_non_null(strstr(body, "secret_root"));
		free(body);
	}
}

/*
 * The administrator's choice: the socket for one group. A member records;
 * a user outside it is told, in one line, which group to ask for, by the
 * socket's mode, and by the agent itself when the mode is opened up behind
 * its back. Without an agent, one line says what to ask an administrator for.
 */
static void test_group_only_and_no_agent(void **state)
{
	char args[1024], cmd[2048], gid[32];
	struct stat st;
	struct run r;

	user_make(&ua, "a", "spin");
	user_make(&ub, "b", "spin");
	snprintf(group, sizeof(group), "bp27g%d", (int)(getpid() % 100000));
	sh("groupadd %s", group);
	snprintf(args, sizeof(args), "--socket-users %s", group);
	agent_start(args);
	assert_int_equal(stat(agent_sock, &st), 0);
	fprintf(stderr, "socket for group %s: mode %04o, gid %u\n", group, st.st_mode & 07777,
		(unsigned int)st.st_gid);
	assert_int_equal(st.st_mode & 07777, 0660);

	/* B, a member: records its own */
	snprintf(cmd, sizeof(cmd), "cd %s && exec %s record -d 2 --json", ub.dir, h_bin());
	snprintf(gid, sizeof(gid), "%u", (unsigned int)st.st_gid);
	assert_int_equal(h_run(ARGV("setpriv", "--reuid", ub.name, "--regid", ub.name, "--groups",
				    gid, "sh", "-c", cmd), 60, &r), 0);
	fprintf(stderr, "b (in %s): exit %d %s", group, r.exit_code, r.err);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	/* A, not a member: the socket's mode says no, and the line names the group */
	assert_int_equal(as(&ua, "record -d 1", 60, &r), 0);
	refused("a (not in the group)", &r, 1, group);
	h_run_free(&r);
	/* the mode opened up behind the agent's back: the agent says no itself */
	assert_int_equal(chmod(agent_sock, 0666), 0);
	assert_int_equal(as(&ua, "record -d 1", 60, &r), 0);
	refused("a (socket 0666, not in the group)", &r, 1, "members of group");
	h_run_free(&r);

	/* no agent at all */
	setenv("BOUNDPROF_SOCKET", h_path("no-agent.sock"), 1);
	assert_int_equal(as(&ua, "record -d 1", 60, &r), 0);
	refused("a (no agent)", &r, 1, "boundprof-agent.service");
	h_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_users_record_their_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_users_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits_hit_by_one_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nobody_over_http, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_only_and_no_agent, setup, teardown),
	};

	if (!h_need_root())
		return 0;
	return cmocka_run_group_tests_name("unpriv", tests, NULL, NULL);
}
