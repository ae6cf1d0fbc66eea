// SPDX-License-Identifier: GPL-2.0
/*
 * proc/cgroup and proc/users: cgroup mounts, /proc/PID/cgroup, unit names,
 * cpu.stat (v1 and v2), cpu.max, pressure lines, memory.events, the limit
 * walk up a cgroup tree, /etc/passwd lines. Inputs are real files' text:
 * this machine's hybrid layout and a pure v2 systemd one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/cgroup.h"
#include "proc/users.h"

/* this machine: v1 controllers, a name=systemd tree, an empty v2 tree */
static const char hybrid_mountinfo[] =
	"25 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/* systemd on pure v2 (Debian 12, Fedora), with propagation tags */
static const char v2_mountinfo[] =
	"22 27 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw\n"
	"29 21 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 "
	"cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	"30 29 0:26 / /tmp/with\\040space rw shared:9 - cgroup2 cgroup2 rw\n";

static void mountinfo__hybrid_and_v2(void **state)
{
	struct bp_cg_mounts m;
	char buf[2048];

	strcpy(buf, hybrid_mountinfo);
	assert_int_equal(bp_cg_parse_mountinfo(buf, &m), 0);
	assert_string_equal(m.v2.dir, "/sys/fs/cgroup/unified");
	assert_string_equal(m.v1[BP_CGC_CPU].dir, "/sys/fs/cgroup/cpu");
	assert_string_equal(m.v1[BP_CGC_MEMORY].dir, "/sys/fs/cgroup/memory");
	assert_string_equal(m.v1_systemd.dir, "/sys/fs/cgroup/systemd");
	assert_string_equal(m.v1[BP_CGC_CPU].root, "/");
	/* cpuacct alone is not the cpu controller */
	bp_cg_parse_controllers("hugetlb\n", &m);
	assert_false(m.v2_has[BP_CGC_CPU]);
	assert_false(m.v2_has[BP_CGC_MEMORY]);

	strcpy(buf, v2_mountinfo);
	assert_int_equal(bp_cg_parse_mountinfo(buf, &m), 0);
	assert_string_equal(m.v2.dir, "/sys/fs/cgroup");
	assert_null(bp_cg_mount_of(&m, BP_CGT_V1_CPU));
	bp_cg_parse_controllers("cpuset cpu io memory hugetlb pids rdma misc\n", &m);
	assert_true(m.v2_has[BP_CGC_CPU]);
	assert_true(m.v2_has[BP_CGC_MEMORY]);

	/* the escaped mount point of a second mount is unescaped (the first counts) */
	strcpy(buf, v2_mountinfo + strlen(v2_mountinfo) - strlen(
		"30 29 0:26 / /tmp/with\\040space rw shared:9 - cgroup2 cgroup2 rw\n"));
	assert_int_equal(bp_cg_parse_mountinfo(buf, &m), 0);
	assert_string_equal(m.v2.dir, "/tmp/with space");

	strcpy(buf, "22 27 0:21 / /proc rw - proc proc rw\n");
	assert_int_equal(bp_cg_parse_mountinfo(buf, &m), -ENOENT);
}

static void proc_cgroup__hybrid_machine(void **state)
{
	char text[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/1d342600ec23deef\n"
		      "1:cpu:/bp-quota\n2:cpuacct:/\n0::/\n";
	struct bp_cg_mounts m;
	struct bp_cg_paths p;
	enum bp_cg_tree t;
	char mi[2048];

	strcpy(mi, hybrid_mountinfo);
	assert_int_equal(bp_cg_parse_mountinfo(mi, &m), 0);
	assert_int_equal(bp_cg_parse_proc(text, &p), 0);
	assert_string_equal(p.v2, "/");
	assert_string_equal(p.v1[BP_CGC_CPU], "/bp-quota");
	assert_string_equal(p.v1[BP_CGC_MEMORY], "/process_api/1d342600ec23deef");
	assert_string_equal(p.systemd, "/");
	/* v2 is the root: the v1 cpu path says more */
	assert_string_equal(bp_cg_group_path(&m, &p), "/bp-quota");
	assert_string_equal(bp_cg_ctrl_path(&m, &p, BP_CGC_CPU, &t), "/bp-quota");
	assert_int_equal(t, BP_CGT_V1_CPU);
	assert_string_equal(bp_cg_ctrl_path(&m, &p, BP_CGC_MEMORY, &t),
			    "/process_api/1d342600ec23deef");
	assert_int_equal(t, BP_CGT_V1_MEMORY);
}

static void proc_cgroup__systemd_hybrid_prefers_v2(void **state)
{
	char text[] = "12:cpu,cpuacct:/system.slice/nginx.service\n"
		      "11:memory:/system.slice/nginx.service\n"
		      "1:name=systemd:/system.slice/nginx.service\n"
		      "0::/system.slice/nginx.service\n";
	struct bp_cg_mounts m = {};
	struct bp_cg_paths p;
	enum bp_cg_tree t;

	assert_int_equal(bp_cg_parse_proc(text, &p), 0);
	assert_string_equal(p.v1[BP_CGC_CPU], "/system.slice/nginx.service");
	assert_string_equal(bp_cg_group_path(&m, &p), "/system.slice/nginx.service");
	/* v2 without the cpu controller: the v1 tree carries it */
	assert_string_equal(bp_cg_ctrl_path(&m, &p, BP_CGC_CPU, &t),
			    "/system.slice/nginx.service");
	assert_int_equal(t, BP_CGT_V1_CPU);
	m.v2_has[BP_CGC_CPU] = true;
	bp_cg_ctrl_path(&m, &p, BP_CGC_CPU, &t);
	assert_int_equal(t, BP_CGT_V2);
}

static void proc_cgroup__pure_v2(void **state)
{
	char text[] = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
		      "app-gnome-firefox-2211.scope\n";
	struct bp_cg_mounts m = { .v2_has = { true, true } };
	struct bp_cg_paths p;
	enum bp_cg_tree t;

	assert_int_equal(bp_cg_parse_proc(text, &p), 0);
	assert_null(p.v1[BP_CGC_CPU]);
	assert_string_equal(bp_cg_group_path(&m, &p), p.v2);
	assert_ptr_equal(bp_cg_ctrl_path(&m, &p, BP_CGC_MEMORY, &t), p.v2);
	assert_int_equal(t, BP_CGT_V2);
}

static void proc_cgroup__forged_or_cut__einval(void **state)
{
	static const char *const bad[] = {
		/* a cgroup named "x\n0::/system.slice/sshd.service" */
		"0::/user.slice/x\n0::/system.slice/sshd.service\n",
		"4:memory:/a\n4:memory:/b\n",
		"4:memory:/a\n5:memory:/b\n",
		"0::/cut-short",
		"garbage\n",
		"0:/\n",
		"x::/\n",
		"0::relative\n",
	};
	struct bp_cg_paths p;
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(buf, bad[i]);
		if (bp_cg_parse_proc(buf, &p) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	}
}

static void unit__systemd_and_containers(void **state)
{
	static const struct {
		const char *path, *unit;
	} cases[] = {
		{ "/system.slice/nginx.service", "nginx.service" },
		{ "/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service" },
		{ "/user.slice/user-1000.slice/session-3.scope", "session-3.scope" },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/app-foo-12.scope",
		  "app-foo-12.scope" },
		{ "/user.slice", "user.slice" },
		{ "/system.slice/docker-3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f701.scope",
		  "docker:3f2a1b4c5d6e" },
		/* systemd inside the container: the container says more */
		{ "/system.slice/docker-3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f701.scope/system.slice/nginx.service",
		  "docker:3f2a1b4c5d6e" },
		{ "/docker/3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f701",
		  "docker:3f2a1b4c5d6e" },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8f1a2b3c_1d2e_4f5a_9b8c_7d6e5f4a3b2c.slice/cri-containerd-aa11bb22cc33dd44ee55ff66aa11bb22cc33dd44ee55ff66aa11bb22cc33dd44.scope",
		  "containerd:aa11bb22cc33" },
		{ "/kubepods/besteffort/pod8f1a2b3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c/aa11bb22cc33dd44ee55ff66aa11bb22cc33dd44ee55ff66aa11bb22cc33dd44",
		  "kubepods:aa11bb22cc33" },
		{ "/kubepods.slice/kubepods-pod1.slice/crio-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		  "crio:0123456789ab" },
		{ "/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope/container",
		  "podman:0123456789ab" },
		{ "/libpod_parent/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "podman:0123456789ab" },
		{ "/lxc.payload.web1", "lxc:web1" },
		{ "/lxc.payload.web1/system.slice/sshd.service", "lxc:web1" },
		{ "/lxc/web1", "lxc:web1" },
		{ "/default/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  "container:0123456789ab" },
	};
	static const char *const none[] = { "/", "/bp-quota", "/process_api/1d342600ec23deef",
					    "/a.service.d", "/.scope",
					    /* 63 hex digits: no id */
					    "/docker/3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7" };
	char out[256];
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (bp_cg_unit(cases[i].path, out, sizeof(out)))
			fail_msg("no unit in %s", cases[i].path);
		if (strcmp(out, cases[i].unit))
			fail_msg("%s: '%s', expected '%s'", cases[i].path, out, cases[i].unit);
	}
	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		if (bp_cg_unit(none[i], out, sizeof(out)) != -ENOENT)
			fail_msg("%s: unit '%s'", none[i], out);
	assert_int_equal(bp_cg_unit_at("/system.slice/a.service/sub", out, sizeof(out), &k), 0);
	assert_int_equal(k, strlen("/system.slice/a.service"));
}

static void cpu_stat__v1_v2_and_none(void **state)
{
	struct bp_cg_cpu_stat st;

	/* v1 on this machine: throttled_time in ns */
	assert_int_equal(bp_cg_parse_cpu_stat("nr_periods 31\nnr_throttled 30\n"
					      "throttled_time 2105017156\nnr_bursts 0\n"
					      "burst_time 0\n", &st), 0);
	assert_true(st.bandwidth);
	assert_int_equal(st.nr_periods, 31);
	assert_int_equal(st.nr_throttled, 30);
	assert_int_equal(st.throttled_ns, 2105017156ULL);
	assert_false(st.have_usage);

	/* v2 with the cpu controller: throttled_usec */
	assert_int_equal(bp_cg_parse_cpu_stat("usage_usec 601870\nuser_usec 600000\n"
					      "system_usec 1870\ncore_sched.force_idle_usec 0\n"
					      "nr_periods 31\nnr_throttled 30\nthrottled_usec 2401389\n"
					      "nr_bursts 0\nburst_usec 0\n", &st), 0);
	assert_true(st.bandwidth);
	assert_int_equal(st.throttled_ns, 2401389000ULL);
	assert_int_equal(st.usage_ns, 601870000ULL);

	/* v2 without it (this machine's unified root) */
	assert_int_equal(bp_cg_parse_cpu_stat("usage_usec 10289927310\nuser_usec 6589963861\n"
					      "system_usec 3699963449\nnice_usec 4939234\n", &st), 0);
	assert_false(st.bandwidth);
	assert_true(st.have_usage);

	assert_int_equal(bp_cg_parse_cpu_stat("", &st), -EINVAL);
	assert_int_equal(bp_cg_parse_cpu_stat("nr_periods x\nthrottled_usec 1\n", &st), -EINVAL);
}

static void cpu_max_and_limits__parsed(void **state)
{
	int64_t q, v;
	uint64_t per, m;

	assert_int_equal(bp_cg_parse_cpu_max("20000 100000\n", &q, &per), 0);
	assert_int_equal(q, 20000);
	assert_int_equal(per, 100000);
	assert_int_equal(bp_cg_parse_cpu_max("max 100000\n", &q, &per), 0);
	assert_int_equal(q, -1);
	assert_int_equal(bp_cg_parse_cpu_max("max\n", &q, &per), -EINVAL);
	assert_int_equal(bp_cg_parse_cpu_max("20000 0\n", &q, &per), -EINVAL);
	assert_int_equal(bp_cg_parse_cpu_max("-5 100000\n", &q, &per), -EINVAL);
	assert_int_equal(bp_cg_parse_cpu_max("20000 100000 7\n", &q, &per), -EINVAL);

	assert_int_equal(bp_cg_parse_int("-1\n", &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(bp_cg_parse_int("20000\n", &v), 0);
	assert_int_equal(bp_cg_parse_int("2x\n", &v), -EINVAL);

	assert_int_equal(bp_cg_parse_mem_limit("max\n", &m), 0);
	assert_true(m == UINT64_MAX);
	assert_int_equal(bp_cg_parse_mem_limit("67108864\n", &m), 0);
	assert_int_equal(m, 67108864);
	assert_int_equal(bp_cg_parse_mem_limit("maximum\n", &m), -EINVAL);
}

static void psi_and_memory_events__parsed(void **state)
{
	struct bp_cg_mem_events ev;
	struct bp_psi_line l;

	assert_int_equal(bp_cg_parse_psi("some avg10=5.56 avg60=24.28 avg300=15.85 "
					 "total=2316763234\nfull avg10=0.00 avg60=0.00 "
					 "avg300=0.00 total=0\n", &l), 0);
	assert_true(l.some_valid && l.full_valid);
	assert_int_equal(l.some_us, 2316763234ULL);
	assert_int_equal(l.full_us, 0);
	/* cpu before 5.13: no full line */
	assert_int_equal(bp_cg_parse_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n", &l),
			 0);
	assert_false(l.full_valid);
	assert_int_equal(l.some_us, 42);
	assert_int_equal(bp_cg_parse_psi("full avg10=0.00 total=1\n", &l), -EINVAL);
	assert_int_equal(bp_cg_parse_psi("some avg10=0.00 total=x\n", &l), -EINVAL);

	assert_int_equal(bp_cg_parse_mem_events("low 0\nhigh 12\nmax 3\noom 1\noom_kill 1\n"
						"oom_group_kill 0\n", &ev), 0);
	assert_int_equal(ev.high, 12);
	assert_int_equal(ev.max, 3);
	assert_int_equal(ev.oom_kill, 1);
	assert_int_equal(bp_cg_parse_mem_events("high 12\n", &ev), -EINVAL);
}

/* a fake cgroup tree: mount/a (no quota), mount/a/b (quota), mount/a/b/c */
static char tree[256];

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup_tree(void **state)
{
	char path[512];

	snprintf(tree, sizeof(tree), "/tmp/bp-cgtest-XXXXXX");
	if (!mkdtemp(tree))
		return -1;
	snprintf(path, sizeof(path), "%s/a", tree);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/b", tree);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/b/c", tree);
	if (mkdir(path, 0755))
		return -1;
	put("a/cpu.max", "max 100000\n");
	put("a/cpu.stat", "usage_usec 5\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
	put("a/b/cpu.max", "20000 100000\n");
	put("a/b/cpu.stat", "usage_usec 9\nnr_periods 31\nnr_throttled 30\nthrottled_usec 2400000\n");
	put("a/b/c/cpu.max", "max 100000\n");
	put("a/b/c/cpu.stat", "usage_usec 9\nnr_periods 31\nnr_throttled 0\nthrottled_usec 0\n");
	put("a/b/c/memory.max", "max\n");
	put("a/b/c/memory.high", "max\n");
	put("a/b/memory.max", "67108864\n");
	put("a/b/memory.high", "max\n");
	put("a/b/memory.events", "low 0\nhigh 0\nmax 7\noom 0\noom_kill 0\n");
	put("a/b/c/cpu.pressure", "some avg10=1.00 avg60=0 avg300=0 total=900\n"
				  "full avg10=0 avg60=0 avg300=0 total=100\n");
	return 0;
}

static int teardown_tree(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	return system(cmd) ? -1 : 0;
}

static void limits__nearest_ancestor_with_a_quota(void **state)
{
	struct bp_cg_mounts m = {};
	struct bp_cg_cpu_limit cl;
	struct bp_cg_mem_limit ml;
	struct bp_psi_line psi[BP_PSI__MAX];
	struct bp_cg_root r;
	char buf[64];

	snprintf(m.v2.dir, sizeof(m.v2.dir), "%s", tree);
	strcpy(m.v2.root, "/");
	assert_int_equal(bp_cg_root_open(&m, BP_CGT_V2, &r), 0);

	assert_int_equal(bp_cg_cpu_limit_read(&r, "/a/b/c", &cl), 0);
	assert_true(cl.valid);
	assert_string_equal(cl.at, "/a/b");
	assert_int_equal(cl.quota_us, 20000);
	assert_int_equal(cl.period_us, 100000);
	/* the throttling of the cgroup that holds the quota */
	assert_int_equal(cl.stat.nr_throttled, 30);
	assert_int_equal(cl.stat.throttled_ns, 2400000000ULL);

	assert_int_equal(bp_cg_cpu_limit_read(&r, "/a", &cl), 0);
	assert_true(cl.valid);
	assert_string_equal(cl.at, "");
	assert_int_equal(cl.quota_us, -1);

	assert_int_equal(bp_cg_mem_limit_read(&r, "/a/b/c", &ml), 0);
	assert_string_equal(ml.at, "/a/b");
	assert_int_equal(ml.max, 67108864);
	assert_int_equal(ml.ev.max, 7);

	assert_int_equal(bp_cg_psi_read(&r, "/a/b/c", NULL, psi), 0);
	assert_int_equal(psi[BP_PSI_CPU].some_us, 900);
	assert_int_equal(psi[BP_PSI_CPU].full_us, 100);
	assert_false(psi[BP_PSI_IO].some_valid);

	/* nothing outside the mount, whatever the path says */
	assert_int_equal(bp_cg_read(&r, "/a/../../etc", "passwd", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(bp_cg_read(&r, "relative", "cpu.max", buf, sizeof(buf)), -EINVAL);
	assert_true(bp_cg_read(&r, "/nonexistent", "cpu.max", buf, sizeof(buf)) < 0);
	assert_int_equal(bp_cg_cpu_limit_read(&r, "/nonexistent", &cl), -ENOENT);
	assert_false(cl.valid);
	bp_cg_root_close(&r);
}

static void resolve__path_under_mount_and_shown_path(void **state)
{
	struct bp_cg_mounts m = {};
	struct bp_cg_target t;
	char arg[600], err[200];
	struct stat st;

	snprintf(m.v2.dir, sizeof(m.v2.dir), "%s", tree);
	strcpy(m.v2.root, "/");
	snprintf(arg, sizeof(arg), "%s/a/b", tree);
	assert_int_equal(stat(arg, &st), 0);
	assert_int_equal(bp_cg_resolve(&m, NULL, arg, &t, err, sizeof(err)), 0);
	assert_int_equal(t.tree, BP_CGT_V2);
	assert_string_equal(t.path, "/a/b");
	assert_int_equal(t.level, 2);
	assert_true(t.id == st.st_ino);

	assert_int_equal(bp_cg_resolve(&m, NULL, "/a/b/c", &t, err, sizeof(err)), 0);
	assert_int_equal(t.level, 3);
	assert_int_equal(bp_cg_resolve(&m, NULL, "/nope", &t, err, sizeof(err)), -ENOENT);
	assert_true(err[0] != '\0');
	/* a name: the directory of the tree that has it */
	assert_int_equal(bp_cg_resolve(&m, "/nonexistent-proc", "c", &t, err, sizeof(err)), 0);
	assert_string_equal(t.path, "/a/b/c");
	assert_int_equal(bp_cg_resolve(&m, "/nonexistent-proc", "zz.service", &t, err,
				       sizeof(err)), -ENOENT);
}

static void users__passwd_lines(void **state)
{
	char name[64], path[300];
	struct bp_users *u;
	uint32_t uid;
	FILE *f;

	assert_int_equal(bp_users_parse_line("nobody:x:65534:65534:nobody:/nonexistent:"
					     "/usr/sbin/nologin", name, sizeof(name), &uid), 0);
	assert_string_equal(name, "nobody");
	assert_int_equal(uid, 65534);
	assert_int_equal(bp_users_parse_line("# comment", name, sizeof(name), &uid), -EINVAL);
	assert_int_equal(bp_users_parse_line("+@netgroup::::::", name, sizeof(name), &uid),
			 -EINVAL);
	assert_int_equal(bp_users_parse_line("a:x:99999999999:1::/:/bin/sh", name, sizeof(name),
					     &uid), -EINVAL);
	assert_int_equal(bp_users_parse_line("a:x::1::/:/bin/sh", name, sizeof(name), &uid),
			 -EINVAL);

	snprintf(path, sizeof(path), "%s/passwd", tree);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
	      "garbage line\nshadow:x:1:1::/:/bin/sh\nlast:x:4242:1::/:/bin/sh", f);
	fclose(f);
	u = bp_users__new(path);
	assert_non_null(u);
	assert_string_equal(bp_users__name(u, 0), "root");
	/* the first line for a uid counts, as for getpwuid() */
	assert_string_equal(bp_users__name(u, 1), "daemon");
	assert_string_equal(bp_users__name(u, 4242), "last");
	assert_null(bp_users__name(u, 77));
	bp_users__free(u);
	unlink(path);
}

static void proc_ids__ourselves(void **state)
{
	struct bp_proc_ids ids;
	struct bp_cg_mounts m;

	if (bp_cg_mounts_read(NULL, &m))
		skip();
	assert_int_equal(bp_proc_ids_read(NULL, getpid(), &m, NULL, &ids), 0);
	assert_true(ids.have_uid);
	assert_int_equal(ids.uid, geteuid());
	assert_non_null(ids.cgroup);
	assert_true(ids.cgroup[0] == '/');
	bp_proc_ids_free(&ids);
	assert_int_equal(bp_proc_ids_read("/nonexistent-proc", 1, &m, NULL, &ids), -ESRCH);
}

/*
 * The inode of our cgroup's directory is the kernel's id of the cgroup: the
 * oracle is the file handle cgroupfs gives (its 64-bit kernfs id), which is
 * what the exec event's ids are compared with. A copy of the ids is deep.
 */
static void cg_ino__kernel_id_and_copy(void **state)
{
	struct { struct file_handle fh; unsigned char b[64]; } h;
	struct bp_proc_ids ids, cp;
	struct bp_cg_mounts m;
	struct bp_cg_root r;
	uint64_t ino = 0, id;
	int mnt, c;

	if (bp_cg_mounts_read(NULL, &m) || !m.v2.dir[0])
		skip();
	assert_int_equal(bp_proc_ids_read(NULL, getpid(), &m, NULL, &ids), 0);
	assert_non_null(ids.cg_v2);
	assert_int_equal(bp_cg_root_open(&m, BP_CGT_V2, &r), 0);
	assert_int_equal(bp_cg_ino(&r, ids.cg_v2, &ino), 0);
	h.fh.handle_bytes = sizeof(h.b);
	{
		char dir[BP_CG_MOUNT_LEN + BP_CG_PATH_LEN];

		snprintf(dir, sizeof(dir), "%s%s", m.v2.dir, ids.cg_v2);
		assert_int_equal(name_to_handle_at(AT_FDCWD, dir, &h.fh, &mnt, 0), 0);
	}
	assert_int_equal(h.fh.handle_bytes, 8);
	memcpy(&id, h.fh.f_handle, sizeof(id));
	assert_true(ino == id);
	/* a path out of the tree is refused, a missing one is not found */
	assert_int_equal(bp_cg_ino(&r, "/../etc", &ino), -EINVAL);
	assert_int_equal(bp_cg_ino(&r, "/no-such-cgroup-here", &ino), -ENOENT);
	/* and back: the id names the same path (by a file handle: root's) */
	{
		char back[BP_CG_PATH_LEN];

		if (geteuid()) {
			assert_int_equal(bp_cg_id_path(&r, id, back, sizeof(back)), -EPERM);
		} else {
			assert_int_equal(bp_cg_id_path(&r, id, back, sizeof(back)), 0);
			assert_string_equal(back, ids.cg_v2);
			/* no cgroup has this id; none has id 0 */
			assert_int_equal(bp_cg_id_path(&r, ~0ULL - 7, back, sizeof(back)), -ENOENT);
			assert_int_equal(bp_cg_id_path(&r, 0, back, sizeof(back)), -ENOENT);
			/* a path that does not fit is refused, not cut */
			assert_int_equal(bp_cg_id_path(&r, id, back, strlen(ids.cg_v2)),
					 -ENAMETOOLONG);
		}
	}
	bp_cg_root_close(&r);

	assert_int_equal(bp_proc_ids_copy(&cp, &ids), 0);
	assert_string_equal(cp.cg_v2, ids.cg_v2);
	assert_ptr_not_equal(cp.cg_v2, ids.cg_v2);
	assert_string_equal(cp.cgroup, ids.cgroup);
	assert_int_equal(cp.uid, ids.uid);
	for (c = 0; c < BP_CGC__MAX; c++) {
		assert_true(!cp.cg_ctrl[c] == !ids.cg_ctrl[c]);
		if (ids.cg_ctrl[c])
			assert_string_equal(cp.cg_ctrl[c], ids.cg_ctrl[c]);
		assert_int_equal(cp.ctrl_tree[c], ids.ctrl_tree[c]);
	}
	bp_proc_ids_free(&ids);
	assert_non_null(cp.cgroup);	/* the copy outlives the original */
	bp_proc_ids_free(&cp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mountinfo__hybrid_and_v2),
		cmocka_unit_test(proc_cgroup__hybrid_machine),
		cmocka_unit_test(proc_cgroup__systemd_hybrid_prefers_v2),
		cmocka_unit_test(proc_cgroup__pure_v2),
		cmocka_unit_test(proc_cgroup__forged_or_cut__einval),
		cmocka_unit_test(unit__systemd_and_containers),
		cmocka_unit_test(cpu_stat__v1_v2_and_none),
		cmocka_unit_test(cpu_max_and_limits__parsed),
		cmocka_unit_test(psi_and_memory_events__parsed),
		cmocka_unit_test(limits__nearest_ancestor_with_a_quota),
		cmocka_unit_test(resolve__path_under_mount_and_shown_path),
		cmocka_unit_test(users__passwd_lines),
		cmocka_unit_test(proc_ids__ourselves),
		cmocka_unit_test(cg_ino__kernel_id_and_copy),
	};

	return cmocka_run_group_tests_name("cgroup", tests, setup_tree, teardown_tree);
}
