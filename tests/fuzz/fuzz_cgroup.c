// SPDX-License-Identifier: GPL-2.0
/*
 * What a cgroup name can put in front of boundprof: /proc/PID/cgroup text
 * (cgroup names are chosen by whoever may create cgroups, newlines
 * included), the unit names made from its paths, and the cgroup files
 * (cpu.stat, cpu.max, pressure, memory.events, limits) and mountinfo. The
 * promises: parsed paths lie inside the input and start with '/', no
 * hierarchy is taken twice, a unit name fits its buffer and its prefix
 * lies inside its path, and a parse that fails says so by its return.
 */
#include "fuzz.h"

#include "proc/cgroup.h"
#include "proc/users.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

static void inside(const char *p, const char *buf, size_t len)
{
	if (!p)
		return;
	if (p < buf || p >= buf + len || p[0] != '/' || p + strlen(p) > buf + len)
		abort();
}

static void units(const char *path)
{
	char out[64];
	size_t k = 0;

	if (!path)
		return;
	if (!bp_cg_unit_at(path, out, sizeof(out), &k)) {
		if (strlen(out) >= sizeof(out) || k > strlen(path) || !out[0])
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_cg_mounts m = { .v2_has = { true, false } };
	struct bp_cg_cpu_stat st;
	struct bp_cg_mem_events ev;
	struct bp_psi_line psi;
	struct bp_cg_paths p;
	enum bp_cg_tree t;
	char *buf, name[64];
	int64_t q, v;
	uint64_t per, lim, kv;
	uint32_t uid;
	int c;

	buf = malloc(size + 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';

	/* the file parsers take the text as it is */
	bp_cg_parse_cpu_stat(buf, &st);
	if (!bp_cg_parse_cpu_max(buf, &q, &per) && (q < -1 || !per))
		abort();
	bp_cg_parse_int(buf, &v);
	bp_cg_parse_mem_limit(buf, &lim);
	bp_cg_parse_psi(buf, &psi);
	bp_cg_parse_mem_events(buf, &ev);
	bp_cg_key_value(buf, "oom_kill", &kv);
	bp_cg_parse_controllers(buf, &m);
	if (!bp_users_parse_line(buf, name, sizeof(name), &uid) && strlen(name) >= sizeof(name))
		abort();
	units(buf);

	/* /proc/PID/cgroup, parsed in place */
	if (!bp_cg_parse_proc(buf, &p)) {
		inside(p.v2, buf, size);
		inside(p.systemd, buf, size);
		for (c = 0; c < BP_CGC__MAX; c++) {
			inside(p.v1[c], buf, size);
			inside(bp_cg_ctrl_path(&m, &p, c, &t), buf, size);
		}
		inside(bp_cg_group_path(&m, &p), buf, size);
		units(p.v2);
		units(p.systemd);
		units(bp_cg_group_path(&m, &p));
	}

	/* mountinfo, parsed in place too */
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (!bp_cg_parse_mountinfo(buf, &m)) {
		if (strlen(m.v2.dir) >= sizeof(m.v2.dir) || strlen(m.v2.root) >= sizeof(m.v2.root))
			abort();
		for (c = 0; c < BP_CGC__MAX; c++)
			if (strlen(m.v1[c].dir) >= sizeof(m.v1[c].dir))
				abort();
	}
	free(buf);
	return 0;
}
