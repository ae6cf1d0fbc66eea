// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle: keeps the target set closed over fork (so that `-- CMD`
 * profiles the command's whole tree) and tells userspace when a process
 * execs, is first sampled, and exits, so that its memory maps can be read
 * while it is still alive.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* this object defines the shared maps the headers declare */
#define BP_DEFINE
#include "common.bpf.h"
#include "stacks.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"
#include "rlang.bpf.h"

volatile __u32 buf_idx = 0;
volatile __u64 pend_rows = 0;
volatile __u64 pend_exits = 0;
volatile __u64 pend_samples = 0;
const volatile __u8 filter_targets = 0;
const volatile __u32 skip_tgid = 0;
const volatile __u64 filter_cgroup_id = 0;
const volatile __u32 filter_cgroup_level = 0;
const volatile __u32 filter_cgroup_tree = 0;
const volatile __u32 filter_cgroup_ssid = 0;
const volatile __u8 unwind_on = 0;
const volatile __u8 py_walk = 0;
const volatile __u8 r_walk = 0;

SEC("tp_btf/sched_process_fork")
int BPF_PROG(bp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u8 *kind, as;

	if (!filter_targets || ptgid == ctgid)
		return 0;
	kind = bpf_map_lookup_elem(&targets, &ptgid);
	if (!kind)
		return 0;
	/* a peer's children are the peer's: their own peers are not followed */
	as = *kind;
	if (bpf_map_update_elem(&targets, &ctgid, &as, BPF_ANY))
		stat_inc(BP_STAT_TARGET_FULL);
	else
		emit_event(BP_EV_FORK, ctgid, ptgid, 0);
	return 0;
}

/* "python..." as the new image's comm: the name userspace attaches a python by */
static __always_inline bool is_python(const char *c)
{
	return c[0] == 'p' && c[1] == 'y' && c[2] == 't' && c[3] == 'h' && c[4] == 'o' &&
	       c[5] == 'n';
}

/*
 * The exec event with the facts userspace would otherwise read from four
 * /proc files (stat, cmdline, status, cgroup) per new image: the argv head
 * was just copied onto the new stack by the exec, so it is resident.
 */
static __always_inline void emit_exec(struct task_struct *p, __u32 tgid, __u32 flags)
{
	struct bp_exec_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	unsigned long as, ae;
	__u64 len;

	if (!e) {
		stat_inc(BP_STAT_EVENT_DROP);
		return;
	}
	e->ev.kind = BP_EV_EXEC;
	e->ev.tgid = tgid;
	e->ev.ppid = BPF_CORE_READ(p, real_parent, tgid);
	e->ev.flags = flags;
	e->ev.ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->ev.comm, sizeof(e->ev.comm));
	e->start_ns = BPF_CORE_READ(p, start_time);
	e->euid = BPF_CORE_READ(p, cred, euid.val);
	e->image = (__u32)BPF_CORE_READ(p, self_exec_id);
	e->pad = 0;
	current_cg_ids(p, e->cg);
	e->flags = 0;
	e->args_len = 0;
	as = BPF_CORE_READ(p, mm, arg_start);
	ae = BPF_CORE_READ(p, mm, arg_end);
	len = ae > as ? ae - as : 0;
	if (len > BP_ARGS_LEN) {
		len = BP_ARGS_LEN;
		e->flags |= BP_EXF_ARGS_CUT;
	}
	if (!len || !bpf_probe_read_user(e->args, len, (void *)as)) {
		e->args_len = len;
		e->flags |= BP_EXF_ARGS;
	}
	/* a python is attached at its exec (agent/collect/session.c) */
	bpf_ringbuf_submit(e, event_wakeup((flags & BP_EVF_WAS_SAMPLED) || is_python(e->ev.comm),
					   sizeof(*e)));
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(bp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u32 flags = 0;
	__u8 *state;

	if (!is_target_task(p))
		return 0;
	/*
	 * A new image: forget that the process was sampled, so its first
	 * sample under the new image is reported (and its maps re-read), and
	 * tell userspace to drain what the old image left first.
	 */
	state = bpf_map_lookup_elem(&seen, &tgid);
	if (state && *state == BP_SEEN_SAMPLED) {
		*state = BP_SEEN_EARLIER;
		flags |= BP_EVF_WAS_SAMPLED;
	}
	/* the old image's unwind mappings would walk the new one into garbage */
	bpf_map_delete_elem(&unwind_procs, &tgid);
	bp_uw_bridges_drop(tgid);
	/* the new image is found anew: never walk it with the old one's offsets */
	bpf_map_delete_elem(&py_procs, &tgid);
	bpf_map_delete_elem(&r_procs, &tgid);
	emit_exec(p, tgid, flags);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(bp_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	bool sampled;

	/* signal->live drops to zero when the last thread of the group exits */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	bpf_map_delete_elem(&unwind_procs, &tgid);
	bp_uw_bridges_drop(tgid);
	sampled = bpf_map_delete_elem(&seen, &tgid) == 0;
	bpf_map_delete_elem(&py_procs, &tgid);
	bpf_map_delete_elem(&r_procs, &tgid);
	if (filter_targets) {
		if (bpf_map_delete_elem(&targets, &tgid) != 0)
			return 0;
	} else if (!sampled) {
		return 0;
	}
	emit_event(BP_EV_EXIT, tgid, BPF_CORE_READ(p, real_parent, tgid), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
