// SPDX-License-Identifier: GPL-2.0
/*
 * The time a CPU spends in one hrtimer callback (its address in target_fn):
 * perf_swevent_hrtimer(), which takes a cpu-clock sample for whoever
 * opened the event, perf or boundprof, and runs the overflow handler
 * (perf's callchain and ring-buffer copy, or boundprof's BPF program).
 * hrtimer callbacks on a CPU run one after another in its interrupt, so
 * the next expiry's end on the CPU is this one's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "hrtcost.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hrt_acc);
} acc SEC(".maps");

const volatile __u64 target_fn = 0;

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrt_entry, struct hrtimer *t, ktime_t *now)
{
	__u32 zero = 0;
	struct hrt_acc *a = bpf_map_lookup_elem(&acc, &zero);

	if (a)
		a->start = (__u64)t->function == target_fn ? bpf_ktime_get_ns() : 0;
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrt_exit, struct hrtimer *t)
{
	__u32 zero = 0;
	struct hrt_acc *a = bpf_map_lookup_elem(&acc, &zero);
	__u64 now = bpf_ktime_get_ns();

	if (!a || !a->start)
		return 0;
	if (now > a->start) {
		a->ns += now - a->start;
		a->n++;
	}
	a->start = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
