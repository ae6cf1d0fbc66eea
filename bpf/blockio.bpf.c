// SPDX-License-Identifier: GPL-2.0
/*
 * Block IO: every request from start to completion, attributed to the
 * process that caused it (docs/blockio.md).
 *
 * block_io_start runs in blk_account_io_start(), when a bio becomes a
 * request, in the context of the task that submitted the bio: that task is
 * the request's owner. block_rq_issue refreshes the size (bios merged into
 * the request after it started), block_rq_merge forgets a request merged
 * into another one, and block_io_done adds the request to the
 * (device, process, direction) row of the current buffer. Kernels before
 * 6.5 have no block_io_* (compat.bpf.h): then block_rq_insert starts a
 * request that goes through an IO scheduler or a plug, in the submitter's
 * context, block_rq_issue starts one issued directly (also the submitter's
 * context), and block_rq_complete ends it. Userspace picks the set before
 * load.
 *
 * Each device also keeps the number of requests in flight and the time it
 * had at least one (busy time), cumulative: userspace takes differences.
 *
 * The tp_btf arguments are BTF pointers, so request fields are read with
 * plain loads: the compiler records CO-RE relocations for them like for
 * BPF_CORE_READ(), without a helper call per field, and a faulting load
 * reads 0. That made bp_io_start about a quarter cheaper here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bits.bpf.h"
#include "common.bpf.h"
#include "compat.bpf.h"

#ifndef PF_KTHREAD
#define PF_KTHREAD	0x00200000
#endif
#define REQ_OP_BITS	8
#define REQ_OP_MASK	((1U << REQ_OP_BITS) - 1)
#define MINORBITS	20

/* a request between start and completion */
struct io_rq {
	struct bp_io_key key;	/* the row it will be added to */
	__u64 start_ns;
	__u64 bytes;
	__u64 rq_start;		/* rq->start_time_ns: a reuse from a requeue */
};

/*
 * request pointer -> io_rq, in a table of fixed slots: a request's address
 * picks a set of IO_WAYS slots, and the request takes a free one of them
 * by compare-and-swap on its id. A preallocated hash cost an insert and a
 * delete per request, ~1.4 and ~1.7 us of bp_io_start's 2.4 and
 * bp_io_done's 2.2 under the bench's mixed load (bucket locks and the free
 * list, each with interrupts saved and restored); a slot is a load and a
 * compare-and-swap.
 *
 * id: the request's address; 0: free; with IO_CLAIMED: taken, its io_rq
 * being written (no reader takes it for the request yet). Whoever swaps a
 * request's id back to 0 ends the request, once.
 */
#define IO_SLOTS	16384	/* requests in flight on all devices (256 per queue here) */
#define IO_WAYS		4
#define IO_CLAIMED	1ULL	/* requests are aligned: the low bit is free */

struct io_slot {
	__u64 id;
	struct io_rq r;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IO_SLOTS);
	__type(key, __u32);
	__type(value, struct io_slot);
} io_rqs SEC(".maps");

/*
 * The request's address as a number: the verifier allows no arithmetic on
 * a pointer (the hash below, the claim mark), so its bytes are copied.
 */
static __always_inline __u64 rq_id(struct request *rq)
{
	__u64 id = 0;

	bpf_probe_read_kernel(&id, sizeof(id), &rq);
	return id;
}

/* the first slot of the request's set: a mix of its address (mix64 of stacks.bpf.h) */
static __always_inline __u32 io_set(__u64 id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return (__u32)id & (IO_SLOTS - IO_WAYS);
}

/* what io_slot() looks for in a request's set */
enum io_want {
	IO_FIND,	/* the slot holding the request */
	IO_STALE,	/* the same, in the ways before the first free one */
	IO_CLAIM,	/* a free slot, taken for the request */
};

/*
 * In id's set: the slot holding request id, or (IO_CLAIM) a free slot taken
 * for id by compare-and-swap, marked IO_CLAIMED. NULL: none (a full set).
 */
static __always_inline struct io_slot *io_slot(__u64 id, enum io_want want)
{
	__u32 k = io_set(id), i;
	struct io_slot *e;

#pragma unroll
	for (i = 0; i < IO_WAYS; i++, k++) {
		e = bpf_map_lookup_elem(&io_rqs, &k);
		if (!e)
			continue;
		if (want == IO_CLAIM) {
			if (!e->id && !__sync_val_compare_and_swap(&e->id, 0, id | IO_CLAIMED))
				return e;
		} else if (e->id == id) {
			return e;
		} else if (want == IO_STALE && !e->id) {
			return NULL;
		}
	}
	return NULL;
}

static __always_inline struct io_slot *io_find(__u64 id)
{
	return io_slot(id, IO_FIND);
}

/*
 * A request starting finds the one its structure held before, never seen
 * to end, only in the ways before the first free one: the slot it claims
 * is that free one, ahead of any later way in every search for it. A
 * stale slot further on ends when the structure is reused again, or at
 * the window's sweep (bp_io_sweep()), which sees its start stamp differ.
 * Searched to the end, each start missed the cache on all four of its
 * set's slots (one line each) where it almost always takes the first.
 */
static __always_inline struct io_slot *io_find_stale(__u64 id)
{
	return io_slot(id, IO_STALE);
}

static __always_inline struct io_slot *io_claim(__u64 id)
{
	return io_slot(id, IO_CLAIM);
}

/* the request leaves its slot: true for the one caller that ends it */
static __always_inline bool io_release(struct io_slot *e, __u64 id)
{
	return __sync_val_compare_and_swap(&e->id, id, 0) == id;
}

struct bp_io_rows_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* sized from userspace before load */
	__type(key, struct bp_io_key);
	__type(value, struct bp_io_val);
};

struct bp_io_rows_map io0 SEC(".maps");
struct bp_io_rows_map io1 SEC(".maps");

/* dev -> in-flight and busy time; cumulative, never drained */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct bp_dev_val);
} io_devs SEC(".maps");

/* no block_io_start (before 6.5): block_rq_insert or block_rq_issue starts requests */
const volatile __u8 io_start_at_issue = 0;

/* requests that ended without a completion event (see io_unseen_end) */
__u64 io_unseen_done = 0;
/* of them, those bp_io_sweep() found (no later request reused their structure) */
__u64 io_unseen_swept = 0;

/* what a new row starts from; too big for the 512-byte stack next to the rest */
static const struct bp_io_val io_zero;

static __always_inline __u32 rq_dev(struct request *rq)
{
	struct block_device *bdev;
	struct gendisk *disk;

	/*
	 * The partition: bio->bi_bdev (the request's first bio) is where
	 * blk_account_io_start() takes rq->part from, and it sets rq->part only
	 * after the tracepoint. No bio (a cloned flush): the whole disk.
	 */
	bdev = rq->bio ? rq->bio->bi_bdev : NULL;
	if (!bdev)
		bdev = rq->part;
	if (bdev)
		return bdev->bd_dev;
	disk = rq->q->disk;
	if (!disk)
		return 0;
	return (__u32)disk->major << MINORBITS | disk->first_minor;
}

static __always_inline struct bp_dev_val *dev_get(__u32 dev)
{
	static const struct bp_dev_val zero;
	struct bp_dev_val *d = bpf_map_lookup_elem(&io_devs, &dev);

	if (d)
		return d;
	bpf_map_update_elem(&io_devs, &dev, &zero, BPF_NOEXIST);
	d = bpf_map_lookup_elem(&io_devs, &dev);
	if (!d)
		stat_inc(BP_STAT_IO_MAP_FULL);
	return d;
}

/*
 * In flight goes up at start and down at completion; the device is busy
 * from a 0 -> 1 step to the next 1 -> 0 step. Racing steps on two CPUs can
 * misplace busy_start by the length of the race (see docs/blockio.md).
 */
static __always_inline void dev_start(__u32 dev, __u64 now)
{
	struct bp_dev_val *d = dev_get(dev);
	__s64 old;

	if (!d)
		return;
	old = __sync_fetch_and_add(&d->inflight, 1);
	if (old == 0)
		d->busy_start = now;
	if ((__u64)old + 1 > d->max_inflight)
		d->max_inflight = old + 1;
}

static __always_inline void dev_done(__u32 dev, __u64 now)
{
	struct bp_dev_val *d = bpf_map_lookup_elem(&io_devs, &dev);
	__u64 start;

	if (!d)
		return;
	if (__sync_fetch_and_add(&d->inflight, -1) != 1)
		return;
	start = d->busy_start;
	if (now > start)
		__sync_fetch_and_add(&d->busy_ns, now - start);
}

static __always_inline void io_add(const struct bp_io_key *key, __u64 bytes, __u64 lat, bool timed)
{
	void *rows = buf_idx & 1 ? (void *)&io1 : (void *)&io0;
	struct bp_io_val *v = bpf_map_lookup_elem(rows, key);
	__u32 slot;
	long err;

	if (!v) {
		err = bpf_map_update_elem(rows, key, &io_zero, BPF_NOEXIST);
		if (err && err != -EEXIST) {
			stat_inc(BP_STAT_IO_MAP_FULL);
			return;
		}
		if (!err)
			pend_add(&pend_rows[BP_PEND_IO]);
		v = bpf_map_lookup_elem(rows, key);
		if (!v) {
			stat_inc(BP_STAT_IO_MAP_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->ops, 1);
	__sync_fetch_and_add(&v->bytes, bytes);
	if (!timed)
		return;
	slot = bp_hist_slot_ns(lat);
	__sync_fetch_and_add(&v->lat_ns, lat);
	__sync_fetch_and_add(&v->hist[bp_bound_idx(slot, BP_HIST_SLOTS)], 1);
}

/*
 * The request structure is being reused, so the request it held before
 * ended, but we never heard of it: the kernel here (6.18 guest) runs no
 * completion program for about 1 request in 10^3..10^4 (docs/blockio.md).
 * Count its ops and bytes, without a latency, and end it now.
 */
static __always_inline void io_unseen_end(struct io_rq *stale, __u64 now)
{
	struct bp_io_key key;
	__u64 bytes = stale->bytes;

	__builtin_memcpy(&key, &stale->key, sizeof(key));
	__sync_fetch_and_add(&io_unseen_done, 1);
	dev_done(key.dev, now);
	io_add(&key, bytes, 0, false);
}

static __always_inline void io_track(struct request *rq)
{
	__u64 id = rq_id(rq), pid_tgid = bpf_get_current_pid_tgid();
	__u32 op = rq->cmd_flags & REQ_OP_MASK;
	struct task_struct *task = bpf_get_current_task_btf();
	struct io_slot *stale, *e;
	struct io_rq r = {};

	/* driver-private passthrough commands (REQ_OP_DRV_*) are not IO to account */
	if (op >= REQ_OP_DRV_IN)
		return;
	r.bytes = rq->__data_len;
	/*
	 * A cache flush is an empty write with REQ_PREFLUSH (blkdev_issue_flush);
	 * REQ_OP_FLUSH is only blk-flush.c's own request, which never starts.
	 */
	if (op == REQ_OP_READ)
		r.key.op = BP_IO_READ;
	else if ((op == REQ_OP_WRITE || op == REQ_OP_ZONE_APPEND) && r.bytes)
		r.key.op = BP_IO_WRITE;
	else
		r.key.op = BP_IO_OTHER;
	r.key.dev = rq_dev(rq);
	/* kernel threads have no process to charge: they are told apart by name */
	if (task->flags & PF_KTHREAD)
		r.key.kthread = 1;
	else
		r.key.tgid = pid_tgid >> 32;
	bpf_get_current_comm(r.key.comm, sizeof(r.key.comm));
	r.start_ns = bpf_ktime_get_ns();
	r.rq_start = rq->start_time_ns;

	/* the structure holds a request we never saw end: whoever frees its slot ends it */
	stale = io_find_stale(id);
	if (stale) {
		struct io_rq old;

		__builtin_memcpy(&old, &stale->r, sizeof(old));
		if (io_release(stale, id))
			io_unseen_end(&old, r.start_ns);
	}
	e = io_claim(id);
	if (!e) {
		stat_inc(BP_STAT_IO_RQ_FULL);
		return;
	}
	__builtin_memcpy(&e->r, &r, sizeof(r));
	/* readers take the slot for the request from here on (an exchange: ordered after the writes) */
	__sync_lock_test_and_set(&e->id, id);
	dev_start(r.key.dev, r.start_ns);
}

/* expected: whether a completion we have no start for is a loss */
static __always_inline void io_finish(struct request *rq, bool expected)
{
	__u64 id = rq_id(rq), now = bpf_ktime_get_ns(), lat, bytes;
	struct bp_io_key key;
	struct io_slot *e;

	e = io_find(id);
	if (!e) {
		if (expected)
			stat_inc(BP_STAT_IO_NO_START);
		return;
	}
	__builtin_memcpy(&key, &e->r.key, sizeof(key));
	lat = now > e->r.start_ns ? now - e->r.start_ns : 0;
	bytes = e->r.bytes;
	/* not ours to end when bp_io_sweep() took it meanwhile */
	if (!io_release(e, id))
		return;
	dev_done(key.dev, now);
	io_add(&key, bytes, lat, true);
}

SEC("?tp_btf/block_io_start")
int BPF_PROG(bp_io_start, struct request *rq)
{
	io_track(rq);
	return 0;
}

SEC("?tp_btf/block_rq_issue")
int BPF_PROG(bp_io_issue, struct request *rq)
{
	struct io_slot *e = io_find(rq_id(rq));
	struct io_rq *r = e ? &e->r : NULL;

	/*
	 * Bios merged into the request since it started make it bigger. When
	 * issue starts requests, an entry from another request (the kernel
	 * stamps each with its own start time) means that one's end was never
	 * seen: io_track() closes it. The same stamp is a requeue.
	 */
	if (r && !(io_start_at_issue && r->rq_start != rq->start_time_ns))
		r->bytes = rq->__data_len;
	else if (io_start_at_issue)
		io_track(rq);
	return 0;
}

/*
 * Before 6.5: a request queued in an IO scheduler or a plug is inserted in
 * the submitter's context and issued later, often by a kblockd worker, so
 * insert is where its owner is known. Inserted again with the same start
 * stamp (a requeue), it is the same request: keep it.
 */
SEC("?tp_btf/block_rq_insert")
int BPF_PROG(bp_io_insert, struct request *rq)
{
	struct io_slot *e = io_find(rq_id(rq));
	struct io_rq *r = e ? &e->r : NULL;

	if (r && r->rq_start == rq->start_time_ns)
		r->bytes = rq->__data_len;
	else
		io_track(rq);
	return 0;
}

/* rq was merged into another request and is freed without completing */
SEC("?tp_btf/block_rq_merge")
int BPF_PROG(bp_io_merge, struct request *rq)
{
	__u64 id = rq_id(rq);
	struct io_slot *e = io_find(id);
	__u32 dev;

	if (!e)
		return 0;
	dev = e->r.key.dev;
	if (io_release(e, id))
		dev_done(dev, bpf_ktime_get_ns());
	return 0;
}

/*
 * A request we did not see start began before we attached, unless it is the
 * flush request blk-flush.c sends on behalf of others: that one never
 * starts, and the requests it serves are accounted.
 */
SEC("?tp_btf/block_io_done")
int BPF_PROG(bp_io_done, struct request *rq)
{
	io_finish(rq, (rq->cmd_flags & REQ_OP_MASK) != REQ_OP_FLUSH);
	return 0;
}

/*
 * Fallback: called for every partial completion; the last one ends the
 * request. Empty ones we never saw issued are the requests a flush served
 * (blk-flush.c issues its own flush request instead): not a loss.
 */
SEC("?tp_btf/block_rq_complete")
int BPF_PROG(bp_io_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	if (nr_bytes < rq->__data_len)
		return 0;
	io_finish(rq, nr_bytes > 0);
	return 0;
}

/*
 * A tracked request whose request structure no longer holds it ended
 * without a completion event: freed (blk-mq clears mq_hctx on free) or
 * reused by a request we do not track (a passthrough command, a flush),
 * which gave it a new start stamp. A plugged, queued or requeued request
 * keeps both. Without this, the last such request of a recording (no
 * reuse comes after it) would be missing from the counts.
 */
static long sweep_one(__u32 k, void *ctx)
{
	struct io_slot *e = bpf_map_lookup_elem(&io_rqs, &k);
	struct blk_mq_hw_ctx *hctx;
	struct request *rq;
	struct io_rq old;
	__u64 id, start;

	if (!e)
		return 1;
	id = e->id;
	/* free, or being written by its start */
	if (!id || (id & IO_CLAIMED))
		return 0;
	rq = (struct request *)id;
	if (bpf_core_read(&hctx, sizeof(hctx), &rq->mq_hctx) ||
	    bpf_core_read(&start, sizeof(start), &rq->start_time_ns))
		return 0;
	__builtin_memcpy(&old, &e->r, sizeof(old));
	if (hctx && start == old.rq_start)
		return 0;
	if (io_release(e, id)) {
		io_unseen_end(&old, bpf_ktime_get_ns());
		__sync_fetch_and_add(&io_unseen_swept, 1);
	}
	return 0;
}

/* run from userspace (BPF_PROG_TEST_RUN) before each window's block IO is read */
SEC("?raw_tp")
int bp_io_sweep(void *ctx)
{
	bpf_loop(IO_SLOTS, sweep_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
