/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel differences, all in one place. Each shim names the kernel change it
 * bridges; docs/kernels.md has the list and the oldest kernel (5.15), and
 * `make test-kernels` loads everything on Debian 12's 6.1.
 *
 * Not here because it is chosen in userspace before load: the block
 * tracepoints. block_io_start/block_io_done came with 5a80bd075f3b (v6.5);
 * before them agent/collect/blockio.c loads the block_rq_insert/issue/
 * complete programs instead, and sets io_start_at_issue (blockio.bpf.c).
 */
#ifndef BP_COMPAT_BPF_H
#define BP_COMPAT_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/*
 * A map value array index the verifier can prove in bounds. What 6.18's
 * verifier proves of a log2 bucket (bp_hist_slot_ns()), 6.1's does not: it
 * loses the upper half of the register through the 32-bit shifts and ORs
 * and rejects &v->hist[slot] with "math between map_value pointer and
 * register with unbounded min value is not allowed" (measured on
 * 6.1.0-57-cloud-amd64). A compare on the 64-bit register bounds it there
 * too; the barrier keeps clang from dropping a clamp it knows is redundant.
 * Use it right before the access.
 */
static __always_inline __u64 bp_bound_idx(__u64 idx, __u64 n)
{
	barrier_var(idx);
	if (idx >= n)
		idx = n - 1;
	return idx;
}

/*
 * task_struct::state became __state in 2f064a59a11f ("sched: Change
 * task_struct::state", v5.14). Below our 5.15 floor, but reading it through
 * the shim costs nothing: CO-RE picks the field at load time.
 */
struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 bp_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre_5_14 *)t, state);
}

/*
 * sched_switch's prev_state argument, the state __schedule() decided on:
 * added by fa2c3254d7cf and made the fourth argument by 9c2136be0878
 * ("sched/tracing: Append prev_state to tp args instead"), both in v5.18.
 * Before it the program has three
 * arguments, and reading a fourth is rejected at load ("invalid bpf_context
 * access"), so userspace reads the tracepoint's prototype from the kernel's
 * BTF and sets switch_has_prev_state; without it prev->__state is read,
 * which is what the tracepoint itself reported then (with the rare race
 * against a wakeup that fa2c3254d7cf fixed). The const knob makes the
 * verifier drop the branch not taken, ctx[3] read included.
 */
extern const volatile __u8 switch_has_prev_state;

static __always_inline __u32 bp_switch_prev_state(__u64 *ctx, struct task_struct *prev)
{
	if (switch_has_prev_state)
		return (__u32)ctx[3];
	return bp_task_state(prev);
}

#endif /* BP_COMPAT_BPF_H */
