// SPDX-License-Identifier: GPL-2.0
/*
 * Users, cgroups and units end to end (root, real BPF, real cgroups): two
 * users' jobs told apart, a service of several processes reported as one,
 * a spinner under a 20% CPU quota reported cpu-throttled against what its
 * cgroup's own cpu.stat says, and a -G recording that holds that cgroup
 * only. The cgroups are made here, under names of this test's pid, and
 * removed again whatever happens (teardown, and atexit as a last resort).
 * Works on a hybrid machine (the quota in the v1 cpu tree, -G in the v2
 * tree) and on pure v2 (both in the v2 tree, when its cpu controller is
 * enabled for children); the pure v2 case is also `make test-kernels`.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

/* the mounts, from mountinfo */
static char v2_mount[256], v1_cpu_mount[256];
static bool v2_has_cpu;

/* cgroups this test made, removed at teardown */
#define MAX_CG 16
static char made[MAX_CG][512];
static int nr_made;

/* word is one of the comma-separated items of list */
static bool has_item(const char *list, const char *word)
{
	size_t n = strlen(word);

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len == n && !strncmp(list, word, n))
			return true;
		list += len + (list[len] == ',');
	}
	return false;
}

static void find_mounts(void)
{
	char line[1024], mp[256], fstype[64], super[512];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %255s", mp) != 1 ||
		    sscanf(sep + 3, "%63s %*s %511s", fstype, super) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2_mount[0])
			snprintf(v2_mount, sizeof(v2_mount), "%s", mp);
		else if (!strcmp(fstype, "cgroup") && !v1_cpu_mount[0] && has_item(super, "cpu"))
			snprintf(v1_cpu_mount, sizeof(v1_cpu_mount), "%s", mp);
	}
	fclose(f);
	if (v2_mount[0]) {
		char p[600], buf[512] = "";
		FILE *c;

		/* the cpu controller enabled for the root's children */
		snprintf(p, sizeof(p), "%s/cgroup.subtree_control", v2_mount);
		c = fopen(p, "r");
		if (c) {
			if (fgets(buf, sizeof(buf), c))
				v2_has_cpu = strstr(buf, "cpu ") || strstr(buf, "cpu\n");
			fclose(c);
		}
	}
}

static void put(const char *dir, const char *file, const char *text)
{
	char p[700];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail_msg("cannot write '%s' to %s: %s", text, p, strerror(errno));
	close(fd);
}

static uint64_t stat_key(const char *dir, const char *key)
{
	char p[700], k[64];
	unsigned long long v, found = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/cpu.stat", dir);
	f = fopen(p, "r");
	assert_non_null(f);
	while (fscanf(f, "%63s %llu", k, &v) == 2)
		if (!strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

/* a fresh cgroup under mount, named for this test; its directory */
static const char *make_cg(const char *mount, const char *name)
{
	char *d;

	assert_true(nr_made < MAX_CG);
	d = made[nr_made];
	snprintf(d, sizeof(made[0]), "%s/bp-test-%d-%s", mount, (int)getpid(), name);
	if (mkdir(d, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", d, strerror(errno));
	nr_made++;
	return d;
}

/* the cgroup's path as /proc/PID/cgroup shows it */
static const char *cg_path(const char *dir, const char *mount)
{
	return dir + strlen(mount);
}

static void kill_members(const char *dir)
{
	char p[700];
	int pid, round;
	FILE *f;

	for (round = 0; round < 50; round++) {
		bool any = false;

		snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
		f = fopen(p, "r");
		if (!f)
			return;
		while (fscanf(f, "%d", &pid) == 1) {
			kill(pid, SIGKILL);
			any = true;
		}
		fclose(f);
		if (!any)
			return;
		usleep(100000);
	}
}

static void remove_cgroups(void)
{
	int i, tries;

	for (i = nr_made - 1; i >= 0; i--) {
		kill_members(made[i]);
		/* a cgroup's last task can take a moment to leave after its exit */
		for (tries = 0; tries < 50 && rmdir(made[i]) && errno == EBUSY; tries++)
			usleep(100000);
		if (access(made[i], F_OK) == 0)
			fprintf(stderr, "test_groups: could not remove %s: %s\n", made[i],
				strerror(errno));
	}
	nr_made = 0;
}

static int teardown(void **state)
{
	h_cleanup();
	remove_cgroups();
	return 0;
}

static uid_t uid_of(const char *name)
{
	struct passwd *pw = getpwnam(name);

	if (!pw)
		fail_msg("no user %s on this machine", name);
	return pw->pw_uid;
}

static const struct bp_json *proc_by_pid(const struct bp_json *rep, double pid)
{
	const struct bp_json *procs = bp_json_get(rep, "processes");
	size_t i;

	for (i = 0; i < bp_json_len(procs); i++)
		if (bp_json_num(bp_json_get(bp_json_at(procs, i), "pid")) == pid)
			return bp_json_at(procs, i);
	return NULL;
}

static const struct bp_json *group_named(const struct bp_json *rep, const char *name)
{
	const struct bp_json *g = bp_json_get(rep, "groups");
	size_t i;

	for (i = 0; i < bp_json_len(g); i++)
		if (!strcmp(bp_json_str(bp_json_get(bp_json_at(g, i), "name")), name))
			return bp_json_at(g, i);
	return NULL;
}

/* boundprof record ARGS... -- COMMAND, which must exit 0; the JSON report */
static struct bp_json *record(const char *json, char *const args[], char *const cmd[])
{
	char *argv[48] = { (char *)h_bin(), "record", "-o", (char *)h_path(json) };
	struct run r;
	int n = 4, i;

	for (i = 0; args[i]; i++)
		argv[n++] = args[i];
	if (cmd) {
		argv[n++] = "--";
		for (i = 0; cmd[i]; i++)
			argv[n++] = cmd[i];
	}
	argv[n] = NULL;
	assert_int_equal(h_run(argv, 120, &r), 0);
	if (r.exit_code)
		fail_msg("record exited %d:\n%s\n%s", r.exit_code, r.out, r.err);
	fprintf(stderr, "%s", r.out);
	h_run_free(&r);
	return h_json_file(h_path(json));
}

/* nobody's and daemon's spinners in one recording: two users, by name and uid */
static void test_two_users(void **state)
{
	char script[1024], nob[16], dae[16];
	const struct bp_json *procs, *g;
	uid_t un = uid_of("nobody"), ud = uid_of("daemon");
	struct bp_json *rep;
	int seen_n = 0, seen_d = 0;
	size_t i;

	snprintf(nob, sizeof(nob), "%u", un);
	snprintf(dae, sizeof(dae), "%u", ud);
	snprintf(script, sizeof(script),
		 "setpriv --reuid=%u --regid=%u --clear-groups %s 2 & "
		 "setpriv --reuid=%u --regid=%u --clear-groups %s 2 & wait",
		 un, getpwnam("nobody")->pw_gid, h_fixture("spin"), ud, getpwnam("daemon")->pw_gid,
		 h_fixture("spin"));
	rep = record("users.json", ARGV("-g", "user"), ARGV("sh", "-c", script));
	assert_non_null(rep);
	procs = bp_json_get(rep, "processes");
	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);

		if (strcmp(bp_json_str(bp_json_get(p, "comm")), "spin"))
			continue;
		if (!strcmp(bp_json_str(bp_json_get(p, "user")), "nobody")) {
			assert_int_equal((int)bp_json_num(bp_json_get(p, "uid")), (int)un);
			seen_n++;
		} else if (!strcmp(bp_json_str(bp_json_get(p, "user")), "daemon")) {
			assert_int_equal((int)bp_json_num(bp_json_get(p, "uid")), (int)ud);
			seen_d++;
		} else {
			fail_msg("spin of user '%s'", bp_json_str(bp_json_get(p, "user")));
		}
		assert_non_null(bp_json_get(p, "cgroup"));
		assert_non_null(bp_json_get(p, "unit"));
	}
	assert_int_equal(seen_n, 1);
	assert_int_equal(seen_d, 1);
	assert_string_equal(bp_json_str(bp_json_get(rep, "group_by")), "user");
	g = group_named(rep, "nobody");
	assert_non_null(g);
	assert_int_equal((int)bp_json_num(bp_json_get(g, "processes")), 1);
	assert_string_equal(bp_json_str(bp_json_get(bp_json_at(bp_json_get(g, "busiest"), 0),
						    "comm")), "spin");
	assert_true(bp_json_num(bp_json_get(g, "on_cpu_s")) > 0);
	g = group_named(rep, "daemon");
	assert_non_null(g);
	assert_int_equal((int)bp_json_num(bp_json_get(g, "processes")), 1);
	/* the shell that started them is root's */
	assert_non_null(group_named(rep, "root"));
	bp_json_free(rep);
}

/* a unit of four processes (a shell and three workers) is one group, and one row of top */
static void test_service_is_one_group(void **state)
{
	const char *svc, *path;
	char script[1200], *folded;
	const struct bp_json *g, *procs;
	struct bp_json *rep;
	struct run r;
	int spins = 0;
	size_t i;

	if (!v2_mount[0])
		skip();
	svc = make_cg(v2_mount, "svc.service");
	path = cg_path(svc, v2_mount);
	/* the shell moves itself first; its children are born in the service */
	snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs || exit 1; "
		 "%s 2 & %s 2 & %s 2 & wait", svc, h_fixture("spin"), h_fixture("spin"),
		 h_fixture("spin"));
	rep = record("svc.json", ARGV("-g", "unit", "-o", (char *)h_path("svc.folded")),
		     ARGV("sh", "-c", script));
	assert_non_null(rep);
	procs = bp_json_get(rep, "processes");
	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);

		if (strcmp(bp_json_str(bp_json_get(p, "comm")), "spin"))
			continue;
		spins++;
		assert_string_equal(bp_json_str(bp_json_get(p, "cgroup")), path);
		assert_string_equal(bp_json_str(bp_json_get(p, "unit")), path + 1);
	}
	assert_int_equal(spins, 3);
	g = group_named(rep, path + 1);
	assert_non_null(g);
	fprintf(stderr, "group %s: %.0f processes, %.2f s on-CPU, verdict %s\n", path + 1,
		bp_json_num(bp_json_get(g, "processes")), bp_json_num(bp_json_get(g, "on_cpu_s")),
		bp_json_str(bp_json_path(g, "verdict.class")));
	assert_true(bp_json_num(bp_json_get(g, "processes")) >= 3);
	assert_int_equal(bp_json_len(bp_json_get(g, "busiest")), 3);
	assert_string_equal(bp_json_str(bp_json_get(bp_json_at(bp_json_get(g, "busiest"), 0),
						    "comm")), "spin");
	assert_true(bp_json_len(bp_json_path(g, "verdict.evidence")) > 0);
	bp_json_free(rep);

	/* the folded stacks start with the unit */
	folded = h_slurp(h_path("svc.folded"), NULL);
	assert_non_null(folded);
	snprintf(script, sizeof(script), "unit:%s;spin;", path + 1);
	assert_non_null(strstr(folded, script));
	free(folded);

	/*
	 * top -g unit: the service is one row with its three workers. They spin
	 * until killed: top's start (loading and verifying its BPF programs)
	 * takes seconds on a busy machine.
	 */
	snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs || exit 1; "
		 "%s 120 & %s 120 & %s 120 & wait", svc, h_fixture("spin"), h_fixture("spin"),
		 h_fixture("spin"));
	h_spawn(ARGV("sh", "-c", script), NULL);
	h_sleep(0.5);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "top", "-g", "unit", "-n", "2"), 60, &r), 0);
	kill_members(svc);
	fprintf(stderr, "%s", r.out);
	assert_int_equal(r.exit_code, 0);
	{
		char *row = strstr(r.out, path + 1);
		int procs_n = 0;

		assert_non_null(row);
		/* the second snapshot's row */
		row = strstr(row + 1, path + 1) ? strstr(row + 1, path + 1) : row;
		assert_int_equal(sscanf(row + strcspn(row, " "), "%d", &procs_n), 1);
		assert_true(procs_n >= 3);
		assert_non_null(strstr(row, " spin "));
	}
	h_run_free(&r);
}

/*
 * Short-lived processes keep their cgroup: a process gone before boundprof
 * read its exec event (a lazy event waits up to a second, a /bin/true lives
 * a millisecond) is placed by the cgroup ids the event carried, not by
 * /proc, where it is no more. Before, such a process had no cgroup and
 * formed a group "?" of its own, apart from its siblings.
 */
static void test_gone_process_keeps_its_cgroup(void **state)
{
	const struct bp_json *procs, *p;
	const char *cg, *path, *c;
	char script[1024];
	struct bp_json *rep;
	int trues = 0;
	size_t i;

	if (!v2_mount[0]) {
		fprintf(stderr, "SKIP: no cgroup2 mount (neither pure v2 nor a hybrid's unified "
			"tree) to place the processes in\n");
		skip();
	}
	cg = make_cg(v2_mount, "short");
	path = cg_path(cg, v2_mount);
	snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs || exit 1; "
		 "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do /bin/true; done; exec %s 1", cg,
		 h_fixture("spin"));
	rep = record("short.json", ARGV("-g", "cgroup"), ARGV("sh", "-c", script));
	assert_non_null(rep);
	procs = bp_json_get(rep, "processes");
	for (i = 0; i < bp_json_len(procs); i++) {
		p = bp_json_at(procs, i);
		if (strcmp(bp_json_str(bp_json_get(p, "comm")), "true"))
			continue;
		c = bp_json_str(bp_json_get(p, "cgroup"));
		fprintf(stderr, "pid %.0f true: cgroup '%s'\n", bp_json_num(bp_json_get(p, "pid")),
			c ? c : "(none)");
		assert_non_null(c);
		assert_string_equal(c, path);
		trues++;
	}
	fprintf(stderr, "%d of 12 short-lived processes listed, all in %s\n", trues, path);
	assert_true(trues > 0);
	/* the spinner is there too, and no process lacks a cgroup */
	assert_non_null(group_named(rep, path));
	assert_null(group_named(rep, "?"));
	bp_json_free(rep);
}

/*
 * The quota's cgroup: v1 cpu where the machine has it, else v2 with its cpu
 * controller enabled; NULL (skip) when neither.
 */
static const char *quota_cg(bool *v1)
{
	const char *d;

	if (v1_cpu_mount[0]) {
		d = make_cg(v1_cpu_mount, "quota");
		put(d, "cpu.cfs_period_us", "100000");
		put(d, "cpu.cfs_quota_us", "20000");
		*v1 = true;
		return d;
	}
	if (v2_mount[0] && v2_has_cpu) {
		d = make_cg(v2_mount, "quota");
		put(d, "cpu.max", "20000 100000");
		*v1 = false;
		return d;
	}
	return NULL;
}

/* the spinner under a 20% quota: cpu-throttled, and the throttled time cpu.stat counted */
static void test_quota_throttles(void **state)
{
	const struct bp_json *p, *g;
	double thr0, thr1, oracle_s, oracle_share, wall, bp_s, bp_share, rq;
	const char *q, *key;
	char script[1024];
	struct bp_json *rep;
	bool v1 = false;

	q = quota_cg(&v1);
	if (!q) {
		fprintf(stderr, "SKIP: no cpu controller for a quota here (no v1 cpu tree, and "
			"cpu not in the v2 root's cgroup.subtree_control)\n");
		skip();
	}
	key = v1 ? "throttled_time" : "throttled_usec";
	thr0 = stat_key(q, key) / (v1 ? 1e9 : 1e6);
	snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs && exec %s 3", q,
		 h_fixture("spin"));
	rep = record("quota.json", ARGV("-g", "cgroup"), ARGV("sh", "-c", script));
	assert_non_null(rep);
	thr1 = stat_key(q, key) / (v1 ? 1e9 : 1e6);
	p = h_find_proc(rep, "spin");
	assert_non_null(p);
	wall = bp_json_num(bp_json_get(p, "wall_s"));
	oracle_s = thr1 - thr0;
	oracle_share = oracle_s / wall;
	bp_s = bp_json_num(bp_json_path(p, "limits.cpu.throttled_s"));
	bp_share = bp_json_num(bp_json_path(p, "limits.cpu.throttled_share"));
	rq = bp_json_num(bp_json_path(p, "off_cpu_s.runqueue"));
	fprintf(stderr, "quota %s (%s): cpu.stat throttled %.3f s of the spinner's %.3f s wall "
		"(%.1f%%); boundprof: throttled %.3f s (%.1f%% of %.3f s watched), run queue "
		"%.3f s (%.1f%% of wall), of it throttled %.3f s, verdict %s\n",
		q, v1 ? "v1" : "v2", oracle_s, wall, 100 * oracle_share, bp_s, 100 * bp_share,
		bp_json_num(bp_json_path(p, "limits.cpu.watched_s")), rq, 100 * rq / wall,
		bp_json_num(bp_json_get(p, "throttled_s")),
		bp_json_str(bp_json_path(p, "verdict.class")));
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.class")), "cpu-throttled");
	assert_string_equal(bp_json_str(bp_json_path(p, "limits.cpu.quota_cgroup")),
			    cg_path(q, v1 ? v1_cpu_mount : v2_mount));
	assert_true(bp_json_num(bp_json_path(p, "limits.cpu.quota_cpus")) == 0.2);
	assert_int_equal((int)bp_json_num(bp_json_path(p, "limits.cpu.quota_us")), 20000);
	/* boundprof read the same counter over the same run: within 50 ms */
	assert_true(oracle_s > 0);
	assert_true(bp_s >= oracle_s - 0.05 && bp_s <= oracle_s + 0.05);
	/* a 20% quota leaves at most 80% to be throttled, the share of wall agrees */
	assert_true(oracle_share <= 0.85);
	assert_true(bp_share >= oracle_share - 0.1 && bp_share <= oracle_share + 0.1);
	/* the quota's part of the run queue is the throttled time, no more */
	assert_true(bp_json_num(bp_json_get(p, "throttled_s")) <= rq + 1e-9);
	assert_true(bp_json_num(bp_json_get(p, "throttled_s")) >= oracle_s - 0.1 ||
		    bp_json_num(bp_json_get(p, "throttled_s")) >= rq - 1e-9);
	assert_true(bp_json_len(bp_json_path(p, "verdict.levers")) >= 3);
	/* the group is its cgroup, and it is throttled as one workload */
	g = group_named(rep, cg_path(q, v1 ? v1_cpu_mount : v2_mount));
	assert_non_null(g);
	assert_string_equal(bp_json_str(bp_json_path(g, "verdict.class")), "cpu-throttled");
	bp_json_free(rep);
}

/* -G: only the cgroup's processes, filtered in the kernel; by directory and by name */
static void test_only_the_cgroup(void **state)
{
	const char *in, *path;
	char script[1024], name[128], *folded;
	const struct bp_json *procs;
	struct bp_json *rep;
	pid_t inside_sh, outside;
	size_t i;
	int spins = 0;

	if (!v2_mount[0])
		skip();
	in = make_cg(v2_mount, "only.scope");
	path = cg_path(in, v2_mount);
	snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs && exec %s 6", in,
		 h_fixture("spin"));
	inside_sh = h_spawn(ARGV("sh", "-c", script), NULL);
	outside = h_spawn(ARGV((char *)h_fixture("spin"), "6"), NULL);
	assert_true(inside_sh > 0 && outside > 0);
	h_sleep(0.5);

	rep = record("only.json", ARGV("-G", (char *)in, "-d", "2", "-o",
				       (char *)h_path("only.folded")), NULL);
	assert_non_null(rep);
	assert_false(bp_json_bool(bp_json_get(rep, "system_wide")));
	procs = bp_json_get(rep, "processes");
	assert_true(bp_json_len(procs) > 0);
	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);

		fprintf(stderr, "  -G: pid %.0f %s in %s\n", bp_json_num(bp_json_get(p, "pid")),
			bp_json_str(bp_json_get(p, "comm")), bp_json_str(bp_json_get(p, "cgroup")));
		assert_string_equal(bp_json_str(bp_json_get(p, "cgroup")), path);
		spins += !strcmp(bp_json_str(bp_json_get(p, "comm")), "spin");
	}
	assert_int_equal(spins, 1);
	assert_non_null(proc_by_pid(rep, inside_sh));
	assert_null(proc_by_pid(rep, outside));
	bp_json_free(rep);
	folded = h_slurp(h_path("only.folded"), NULL);
	assert_non_null(folded);
	for (char *l = folded; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (strncmp(l, "spin;", 5))
			fail_msg("a stack of another process: %.80s", l);
	free(folded);

	/* the same cgroup by its unit name */
	snprintf(name, sizeof(name), "%s", path + 1);
	rep = record("only-name.json", ARGV("-G", name, "-d", "1"), NULL);
	assert_non_null(rep);
	assert_non_null(proc_by_pid(rep, inside_sh));
	assert_null(proc_by_pid(rep, outside));
	bp_json_free(rep);
}

static void test_bad_cgroup__one_line_exit_2(void **state)
{
	struct run r;

	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-G", "/no-such-cgroup-here",
				    "-d", "1"), 30, &r), 0);
	fprintf(stderr, "%s", r.err);
	assert_int_equal(r.exit_code, 2);
	assert_int_equal(h_lines(r.err), 1);
	assert_non_null(strstr(r.err, "no-such-cgroup-here"));
	h_run_free(&r);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-G", "/", "-p", "1", "-d", "1"),
			       30, &r), 0);
	assert_int_equal(r.exit_code, 2);
	assert_int_equal(h_lines(r.err), 1);
	h_run_free(&r);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "top", "-g", "users"), 30, &r), 0);
	assert_int_equal(r.exit_code, 2);
	assert_int_equal(h_lines(r.err), 1);
	h_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_two_users, teardown),
		cmocka_unit_test_teardown(test_service_is_one_group, teardown),
		cmocka_unit_test_teardown(test_gone_process_keeps_its_cgroup, teardown),
		cmocka_unit_test_teardown(test_quota_throttles, teardown),
		cmocka_unit_test_teardown(test_only_the_cgroup, teardown),
		cmocka_unit_test_teardown(test_bad_cgroup__one_line_exit_2, teardown),
	};
	int rc;

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	find_mounts();
	fprintf(stderr, "cgroup mounts: v2 '%s' (cpu for children: %s), v1 cpu '%s'\n", v2_mount,
		v2_has_cpu ? "yes" : "no", v1_cpu_mount);
	atexit(remove_cgroups);
	rc = cmocka_run_group_tests_name("groups", tests, NULL, NULL);
	remove_cgroups();
	return rc;
}
