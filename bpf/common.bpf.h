/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by every BPF object of boundprof. The maps and globals are
 * defined once in proc.bpf.c and declared extern everywhere else; bpftool's
 * static linker resolves them into one object and one skeleton.
 */
#ifndef BP_COMMON_BPF_H
#define BP_COMMON_BPF_H

#include "boundprof.h"

#ifndef BP_DEFINE
#define BP_EXTERN extern
#else
#define BP_EXTERN
#endif

#define ENOENT	2
#define EFAULT	14
#define EEXIST	17

/* processes to profile (tgid -> 1) when filter_targets is set */
struct bp_targets_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
};
BP_EXTERN struct bp_targets_map targets SEC(".maps");

/*
 * tgids sampled at least once, so userspace hears about each only once per
 * image; an exec demotes a sampled process to BP_SEEN_EARLIER so its first
 * sample under the new image is reported again, and its exit still is.
 */
#define BP_SEEN_SAMPLED	1
#define BP_SEEN_EARLIER	2
struct bp_seen_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u8);
};
BP_EXTERN struct bp_seen_map seen SEC(".maps");

struct bp_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_stats);
};
BP_EXTERN struct bp_stats_map stats SEC(".maps");

struct bp_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
};
BP_EXTERN struct bp_events_map events SEC(".maps");

/*
 * Aggregation maps are double-buffered: programs write into buffer buf_idx
 * while userspace drains and clears the other one, so a drain never races
 * with an update of the entry it is reading.
 */
BP_EXTERN volatile __u32 buf_idx;
BP_EXTERN const volatile __u8 filter_targets;

static __always_inline void stat_inc(enum bp_stat s)
{
	__u32 zero = 0;
	struct bp_stats *st = bpf_map_lookup_elem(&stats, &zero);

	if (st && s < BP_STAT__MAX)
		st->v[s]++;
}

static __always_inline bool is_target(__u32 tgid)
{
	if (!filter_targets)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline void emit_event(__u32 kind, __u32 tgid, __u32 ppid, __u32 flags)
{
	struct bp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(BP_STAT_EVENT_DROP);
		return;
	}
	e->kind = kind;
	e->tgid = tgid;
	e->ppid = ppid;
	e->flags = flags;
	e->ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

#endif /* BP_COMMON_BPF_H */
