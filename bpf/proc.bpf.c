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

#define PF_KTHREAD	0x00200000

volatile __u32 buf_idx = 0;
volatile __u32 exit_walks = 0;
volatile __u32 interp_gen = 0;
volatile __u64 pend_rows[BP_PEND__MAX] = {};
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
static __always_inline void emit_exec(struct task_struct *p, __u32 tgid, __u32 flags,
				      struct linux_binprm *bprm, bool walked)
{
	struct bp_exec_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct inode *ino;
	unsigned long as, ae;
	const char *interp;
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
	e->mnt_ns = bp_mnt_ns(p);
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
	/*
	 * The file exec'd (a script's interpreter) and the path it was
	 * asked by: what names the process's code if it is gone before
	 * userspace reads its maps (the exit's walk, struct bp_exit_event).
	 */
	ino = BPF_CORE_READ(bprm, file, f_inode);
	interp = BPF_CORE_READ(bprm, interp);
	e->path[0] = '\0';
	if (ino && interp && bpf_probe_read_kernel_str(e->path, sizeof(e->path), interp) > 1) {
		bp_inode_id(ino, &e->file);
		e->ev.flags |= BP_EVF_EXEC_FILE;
	} else {
		__builtin_memset(&e->file, 0, sizeof(e->file));
	}
	/*
	 * A python is attached at its exec (agent/collect/session.c), and
	 * the old image's interpreter frames must be named before it goes.
	 * Any other exec waits for userspace's next look, as a first sample
	 * does: that look reads the events before it drains, so the old
	 * image's samples are still named by its maps, and the new image's
	 * unwind list comes with it. Waking userspace for each sampled
	 * process that exec'd was a third of its wake-ups under the
	 * bench's churn of 20 new processes a second.
	 */
	bpf_ringbuf_submit(e, event_wakeup(((flags & BP_EVF_WAS_SAMPLED) && walked) ||
					   is_python(e->ev.comm), sizeof(*e)));
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(bp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u32 flags = 0;
	bool walked;
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
	map_drop(&unwind_procs, &tgid);
	bp_uw_bridges_drop(tgid);
	/* the new image is found anew: never walk it with the old one's offsets */
	walked = !map_drop(&py_procs, &tgid);
	walked |= !map_drop(&r_procs, &tgid);
	emit_exec(p, tgid, flags, bprm, walked);
	return 0;
}

/* the task_vma iterator (6.7): weak, for the variant of bp_exit that walks nothing */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __weak __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

#define VM_READ		0x1
#define VM_WRITE	0x2
#define VM_EXEC		0x4
#define VM_MAYSHARE	0x80
/* mappings looked at, at most */
#define BP_WALK_VMAS	1024

/*
 * The file of a mapping, as an index into w->files: the previous mapping's
 * when it is the same inode (a file's segments are mapped side by side),
 * else a new one; BP_WALK_FILES when there is no room. The counts live in
 * w, not in registers: loaded back as unknown values, they let the
 * verifier take each pass of the walk for the same state (else it walked
 * the loop once per count).
 */
static __always_inline __u32 walk_file(struct bp_maps_walk *w, struct inode *ino)
{
	__u64 i_ino = BPF_CORE_READ(ino, i_ino);
	__u32 dev = BPF_CORE_READ(ino, i_sb, s_dev), n = w->nr_files;

	if (n > BP_WALK_FILES)
		return BP_WALK_FILES;
	if (n && w->files[n - 1].ino == i_ino && w->files[n - 1].dev == dev)
		return n - 1;
	if (n == BP_WALK_FILES)
		return BP_WALK_FILES;
	bp_inode_id(ino, &w->files[n]);
	w->nr_files = n + 1;
	return n;
}

/*
 * p's mappings into w, at its exit (process context: the iterator only
 * tries its locks, and gives up with interrupts off). False when they
 * could not be walked at all.
 */
static __always_inline bool walk_maps(struct task_struct *p, struct bp_maps_walk *w)
{
	struct mm_struct *mm = p->mm;
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	__u64 vdso, brk, start_brk, start_stack, flags, start, end;
	struct bp_walk_map *m;
	struct file *file;
	__u32 n, f;

	w->nr_maps = 0;
	w->nr_files = 0;
	w->vmas = 0;
	w->whole = 0;
	if (!mm)
		return false;
	vdso = (__u64)BPF_CORE_READ(mm, context.vdso);
	brk = BPF_CORE_READ(mm, brk);
	start_brk = BPF_CORE_READ(mm, start_brk);
	start_stack = BPF_CORE_READ(mm, start_stack);
	if (bpf_iter_task_vma_new(&it, p, 0)) {
		bpf_iter_task_vma_destroy(&it);
		return false;
	}
	while ((vma = bpf_iter_task_vma_next(&it))) {
		if (w->vmas++ >= BP_WALK_VMAS)
			goto out;
		file = vma->vm_file;
		flags = vma->vm_flags;
		start = vma->vm_start;
		end = vma->vm_end;
		if (file) {
			f = walk_file(w, file->f_inode);
			if (f >= BP_WALK_FILES)
				goto out;
		} else if (start == vdso) {
			f = BP_WM_VDSO;
		} else if (start <= brk && end >= start_brk) {
			f = BP_WM_HEAP;
		} else if (start <= start_stack && end >= start_stack) {
			f = BP_WM_STACK;
		} else {
			continue;
		}
		n = w->nr_maps;
		if (n >= BP_WALK_MAPS)
			goto out;
		m = &w->maps[n];
		m->start = start;
		m->end = end;
		m->off = file ? vma->vm_pgoff << 12 : 0;
		m->file = f;
		m->prot = (flags & (VM_READ | VM_WRITE | VM_EXEC)) |
			  (flags & VM_MAYSHARE ? BP_WM_SHARED : 0);
		__builtin_memset(m->pad, 0, sizeof(m->pad));
		w->nr_maps = n + 1;
	}
	w->whole = 1;
out:
	bpf_iter_task_vma_destroy(&it);
	return true;
}

/* the exit event is built here, then copied into the ring as long as its mappings */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_exit_event);
} exit_scratch SEC(".maps");

/* a sampled process's exit, with its ids and mappings (struct bp_exit_event) */
static __always_inline void emit_exit_walked(struct task_struct *p, __u32 tgid)
{
	struct bp_exit_event *e;
	__u32 zero = 0;
	__u64 n;

	e = bpf_map_lookup_elem(&exit_scratch, &zero);
	if (!e)
		return;
	e->ev.kind = BP_EV_EXIT;
	e->ev.tgid = tgid;
	e->ev.ppid = BPF_CORE_READ(p, real_parent, tgid);
	e->ev.flags = 0;
	e->ev.ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->ev.comm, sizeof(e->ev.comm));
	bp_task_ids(p, &e->euid, &e->nspid, &e->mnt_ns);
	e->pad = 0;
	if (walk_maps(p, &e->w)) {
		e->ev.flags |= BP_EVF_MAPS;
		stat_inc(BP_STAT_EXIT_MAPS);
		if (exit_walks != BP_EXIT_WALKS_OK && exit_walks != BP_EXIT_WALKS_NONE)
			exit_walks = BP_EXIT_WALKS_OK;
	} else {
		stat_inc(BP_STAT_EXIT_MAPS_UNWALKED);
		/* its memory let go before this tracepoint: first samples wake us again */
		if (!p->mm)
			exit_walks = BP_EXIT_WALKS_NONE;
	}
	n = e->w.nr_maps;
	if (n > BP_WALK_MAPS)
		n = BP_WALK_MAPS;
	n = BP_EXIT_EVENT_SIZE(n);
	if (bpf_ringbuf_output(&events, e, n, event_wakeup(false, n)))
		stat_inc(BP_STAT_EVENT_DROP);
}

static __always_inline int exit_prog(struct task_struct *p, bool walk)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	bool sampled;

	/* signal->live drops to zero when the last thread of the group exits */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	map_drop(&unwind_procs, &tgid);
	bp_uw_bridges_drop(tgid);
	sampled = map_drop(&seen, &tgid) == 0;
	map_drop(&py_procs, &tgid);
	map_drop(&r_procs, &tgid);
	if (filter_targets) {
		if (map_drop(&targets, &tgid) != 0)
			return 0;
	} else if (!sampled) {
		return 0;
	}
	if (walk && sampled && !(p->flags & PF_KTHREAD))
		emit_exit_walked(p, tgid);
	else
		emit_event(BP_EV_EXIT, tgid, BPF_CORE_READ(p, real_parent, tgid), 0);
	return 0;
}

/*
 * Two variants, one loaded: with the walk of a sampled process's mappings
 * where the kernel has the task_vma iterator (loader.c), without it before.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(bp_exit, struct task_struct *p)
{
	return exit_prog(p, true);
}

SEC("?tp_btf/sched_process_exit")
int BPF_PROG(bp_exit_nowalk, struct task_struct *p)
{
	return exit_prog(p, false);
}

char LICENSE[] SEC("license") = "GPL";
