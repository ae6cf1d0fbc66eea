/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython frames, walked at sample time (docs/python.md). For a process
 * userspace has found to be CPython (py_procs), the sampled thread's
 * PyThreadState comes from glibc's thread-specific data under the
 * interpreter's pthread key, and its chain of frames is read back to the
 * first: each frame becomes one word, the code object and the instruction
 * (bpf/python.h). The stack is stored like the native ones, in its own
 * maps, and its hash goes into the sample's key. A code object seen for the
 * first time is copied to userspace at once (py_events), so that even an
 * interpreter that exits before the next drain keeps its names.
 */
#ifndef BP_PYTHON_BPF_H
#define BP_PYTHON_BPF_H

#include "common.bpf.h"
#include "stacks.bpf.h"
#include "python.h"

/* code objects copied per sample at most: the rest follow in later samples */
#define BP_PY_NEW_MAX		16
/* glibc's first block of thread-specific data holds keys 0..31 */
#define BP_PY_KEYS_MAX		32

/* the maps are defined once, in proc.bpf.c, like the shared ones of common.bpf.h */
struct bp_py_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	/* written by userspace, an element a process: nothing to preallocate */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct bp_py_proc);
};
BP_EXTERN struct bp_py_procs_map py_procs SEC(".maps");

struct bp_py_seen_key {
	__u64 code;
	__u32 tgid;
	__s32 firstlineno;	/* tells a code object from another later at its address */
};

/*
 * An interpreter walker's cache: an LRU of BP_INTERP_CACHE_ENTRIES key_t ->
 * val_t, in slot 0 of an array of one map (struct name_map). Userspace
 * creates the LRU when it hands the first process of the language to the
 * walker (bp_loader__open_interp()): the kernel preallocates LRU maps
 * whole, 1.4-1.5 MiB that a machine running no Python or R would hold for
 * nothing. Sizes, not types: a struct named only in an inner map's
 * definition gets no body in BTF. The inner map here is only the template
 * libbpf makes, and frees, to create the outer one: the kernel matches an
 * inner hash map by type, key, value and flags, not by size (since 5.10),
 * so one entry does, where 16384 preallocated took 3.3 ms of every start.
 */
#define BP_INTERP_CACHE_MAPS(name, key_t, val_t)		\
	struct name##_lru {					\
		__uint(type, BPF_MAP_TYPE_LRU_HASH);		\
		__uint(max_entries, 1);				\
		__uint(key_size, sizeof(key_t));		\
		__uint(value_size, sizeof(val_t));		\
	};							\
	struct name##_map {					\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);	\
		__uint(max_entries, 1);				\
		__type(key, __u32);				\
		__array(values, struct name##_lru);		\
	}

/* slot 0 of an interpreter cache's map (py_seen, r_seen, r_locs), or NULL before it is made */
#define bp_interp_cache(outer) ({ __u32 __z = 0; bpf_map_lookup_elem(outer, &__z); })

/* code objects already copied to userspace; an evicted one is copied again */
BP_INTERP_CACHE_MAPS(bp_py_seen, struct bp_py_seen_key, __u8);
BP_EXTERN struct bp_py_seen_map py_seen SEC(".maps");

struct bp_py_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024);
};
BP_EXTERN struct bp_py_events_map py_events SEC(".maps");

BP_EXTERN struct bp_stacks_map pystacks0 SEC(".maps");
BP_EXTERN struct bp_stacks_map pystacks1 SEC(".maps");

struct bp_py_scratch {
	struct bp_stack st;
	__u8 ts[BP_PY_TS_READ_MAX];
	__u8 fr[BP_PY_FRAME_READ_MAX];
	__u64 new_code[BP_PY_NEW_MAX];
	__s32 new_line[BP_PY_NEW_MAX];
};

/* perf_event programs do not nest on a CPU: one slot each */
struct bp_py_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_py_scratch);
};
BP_EXTERN struct bp_py_scratch_map py_scratch SEC(".maps");

struct bp_py_ev_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_py_code_ev);
};
BP_EXTERN struct bp_py_ev_scratch_map py_ev_scratch SEC(".maps");

/* fields of a buffer read from the process, at offsets from userspace */
static __always_inline __u64 py_rd64(const __u8 *buf, __u32 off, __u32 cap)
{
	off &= cap - 1;
	off &= ~7U;
	if (off > cap - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u32 py_rd32(const __u8 *buf, __u32 off, __u32 cap)
{
	off &= cap - 1;
	off &= ~3U;
	if (off > cap - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

static __always_inline __u8 py_rd8(const __u8 *buf, __u32 off, __u32 cap)
{
	off &= cap - 1;
	return buf[off];
}

/* one string of a code object into its slot; the slot's size is a power of two */
static __always_inline void py_copy_str(struct bp_py_str *s, __u8 *text, __u32 slot,
					__u64 addr, const struct bp_py_proc *py)
{
	__u8 hdr[40];
	__u32 state, data_off, kind;
	__u64 len, n;

	s->addr = addr;
	s->flags = BP_PY_STR_ERR;
	s->copied = 0;
	/*
	 * 40 bytes: the smallest compact string's header, so never past its
	 * end. length at 16 and state at 32 in every version (bpf/python.h).
	 */
	if (!addr || bpf_probe_read_user(hdr, sizeof(hdr), (void *)addr))
		return;
	len = *(__u64 *)(hdr + BP_PY_STR_LEN);
	state = *(__u32 *)(hdr + BP_PY_STR_STATE);
	if (!(state & BP_PY_STATE_COMPACT))
		return;
	kind = (state >> BP_PY_STATE_KIND_SHIFT) & BP_PY_STATE_KIND_MASK;
	if (kind != 1 && kind != 2 && kind != 4)
		return;
	if (state & BP_PY_STATE_ASCII) {
		data_off = py->str_ascii;
		s->flags = BP_PY_STR_ASCII;
	} else {
		data_off = py->str_compact;
		s->flags = 0;
	}
	s->len = len;
	s->kind = kind;
	n = len * kind;
	if (n > slot)
		n = slot;
	barrier_var(n);
	if (n > slot)
		return;
	if (n && bpf_probe_read_user(text, n, (void *)(addr + data_off))) {
		s->flags |= BP_PY_STR_ERR;
		return;
	}
	s->copied = n;
}

/*
 * Copy one code object to userspace; userspace decodes it later, so nothing
 * here depends on the version but the offsets. Its own function: the
 * verifier checks it once, not once per call site.
 */
static __noinline int py_emit_code(__u32 tgid, __u64 code, __s32 firstlineno)
{
	struct bp_py_seen_key sk = { .code = code, .tgid = tgid, .firstlineno = firstlineno };
	const struct bp_py_proc *py;
	struct bp_py_code_ev *ev;
	__u64 p[3] = {}, size = 0;
	__u8 one = 1;
	__u32 zero = 0, n;
	void *seen;

	py = bpf_map_lookup_elem(&py_procs, &tgid);
	ev = bpf_map_lookup_elem(&py_ev_scratch, &zero);
	seen = bp_interp_cache(&py_seen);
	if (!py || !ev || !seen)
		return 0;
	/* first sight: claim it, so that another CPU does not copy it too */
	if (bpf_map_update_elem(seen, &sk, &one, BPF_NOEXIST))
		return 0;
	ev->kind = BP_PY_EV_CODE;
	ev->tgid = tgid;
	ev->code = code;
	ev->firstlineno = firstlineno;
	ev->version = py->version;
	ev->flags = 0;
	bpf_probe_read_user(&p[0], 8, (void *)(code + py->co_name));
	bpf_probe_read_user(&p[1], 8, (void *)(code + py->co_filename));
	bpf_probe_read_user(&p[2], 8, (void *)(code + py->co_linetable));
	py_copy_str(&ev->name, ev->name_text, BP_PY_NAME_MAX, p[0], py);
	py_copy_str(&ev->file, ev->file_text, BP_PY_FILE_MAX, p[1], py);
	ev->table_addr = p[2];
	ev->table_size = 0;
	n = 0;
	/* a bytes object: ob_size at 16, the bytes at 32, in every version */
	if (!p[2] || bpf_probe_read_user(&size, 8, (void *)(p[2] + 16))) {
		ev->flags |= BP_PY_CODE_TABLE_ERR;
	} else {
		ev->table_size = size;
		n = size > BP_PY_TABLE_MAX ? BP_PY_TABLE_MAX : size;
		barrier_var(n);
		if (n > BP_PY_TABLE_MAX)
			n = BP_PY_TABLE_MAX;
		if (n && bpf_probe_read_user(ev->table, n, (void *)(p[2] + 32))) {
			ev->flags |= BP_PY_CODE_TABLE_ERR;
			n = 0;
		}
	}
	ev->table_len = n;
	if (bpf_ringbuf_output(&py_events, ev, BP_PY_EV_FIXED + n, 0)) {
		/* not claimed after all: a later sample tries again */
		bpf_map_delete_elem(seen, &sk);
		stat_inc(BP_STAT_PY_CODE_LOST);
	}
	return 0;
}

/* the sampled thread's PyThreadState, or 0 (no Python on this thread, or a loss counted) */
static __always_inline __u64 py_tstate(struct bp_py_proc *py, struct task_struct *task)
{
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase), ts = 0;
	__s32 key = py->key;

	if (key < 0) {
		__s32 tss[2] = {};

		/* until the interpreter made its key, no thread runs Python */
		if (py->key_tss) {
			if (bpf_probe_read_user(tss, sizeof(tss), (void *)py->key_addr) ||
			    tss[0] != 1 || tss[1] < 0)
				return 0;
			key = tss[1];
		} else if (bpf_probe_read_user(&key, sizeof(key), (void *)py->key_addr) ||
			   key < 0) {
			return 0;
		}
		py->key = key;
	}
	if (key >= BP_PY_KEYS_MAX || !fsbase) {
		stat_inc(BP_STAT_PY_TSTATE_ERR);
		return 0;
	}
	if (bpf_probe_read_user(&ts, sizeof(ts),
				(void *)(fsbase + py->tsd_off + (__u64)key * py->tsd_size))) {
		stat_inc(BP_STAT_PY_TSTATE_ERR);
		return 0;
	}
	return ts;
}

/*
 * Frames are walked with bpf_loop() (5.17+): a bounded loop of 127 frames
 * has too many paths for the verifier (a million instructions, measured).
 * Userspace turns the walk on where the helper exists; without it the
 * branch is dead and never verified.
 */
BP_EXTERN const volatile __u8 py_walk;

struct py_walk_ctx {
	struct bp_py_proc *py;
	struct bp_py_scratch *sc;
	__u64 frame;
	__u64 last;
	__u32 tgid;
	__u32 n;
	__u32 nnew;
	__u32 f_read;
};

static long py_walk_frame(__u32 i, void *data)
{
	struct py_walk_ctx *c = data;
	struct bp_py_proc *py = c->py;
	struct bp_py_scratch *sc = c->sc;
	__u64 code, ip, pos = 0;
	__u32 f_read = c->f_read;
	__s32 line = 0, lasti;
	bool end;

	if (!c->frame)
		return 1;
	if (f_read > BP_PY_FRAME_READ_MAX)
		f_read = BP_PY_FRAME_READ_MAX;
	if (bpf_probe_read_user(sc->fr, f_read, (void *)c->frame)) {
		stat_inc(BP_STAT_PY_FRAME_ERR);
		return 1;
	}
	code = py_rd64(sc->fr, py->f_code, BP_PY_FRAME_READ_MAX);
	c->frame = py_rd64(sc->fr, py->f_back, BP_PY_FRAME_READ_MAX);
	if (py->entry_kind == BP_PY_ENTRY_SHIM &&
	    (py_rd8(sc->fr, py->f_entry, BP_PY_FRAME_READ_MAX) == 3 || code == py->none_addr)) {
		/* between two runs: the frame before it ends its run */
		if (c->n && c->n <= BP_MAX_STACK_DEPTH)
			sc->st.ips[(c->n - 1) & 127] |= BP_PY_RUN_END;
		return 0;
	}
	if (!code || (code & 7)) {
		stat_inc(BP_STAT_PY_FRAME_ERR);
		return 1;
	}
	if (c->n >= BP_MAX_STACK_DEPTH) {
		stat_inc(BP_STAT_PY_TRUNC);
		return 1;
	}
	if (py->lasti_kind == BP_PY_LASTI_PTR) {
		ip = py_rd64(sc->fr, py->f_lasti, BP_PY_FRAME_READ_MAX);
		if (ip >= code + py->co_code)
			pos = (ip - code - py->co_code) / 2;
	} else {
		lasti = (__s32)py_rd32(sc->fr, py->f_lasti, BP_PY_FRAME_READ_MAX);
		if (lasti > 0)
			pos = py->lasti_kind == BP_PY_LASTI_BYTES ? lasti / 2 : lasti;
	}
	end = py->entry_kind == BP_PY_ENTRY_EACH ||
	      (py->entry_kind == BP_PY_ENTRY_FLAG && py_rd8(sc->fr, py->f_entry, BP_PY_FRAME_READ_MAX));
	sc->st.ips[c->n & 127] = bp_py_word(code, pos, end);
	c->n++;
	/* a new code object (or another one at its address) is copied once */
	if (c->nnew < BP_PY_NEW_MAX && code != c->last) {
		struct bp_py_seen_key sk = { .code = code, .tgid = c->tgid };
		void *seen = bp_interp_cache(&py_seen);

		bpf_probe_read_user(&line, sizeof(line), (void *)(code + py->co_firstlineno));
		sk.firstlineno = line;
		if (seen && !bpf_map_lookup_elem(seen, &sk)) {
			sc->new_code[c->nnew & (BP_PY_NEW_MAX - 1)] = code;
			sc->new_line[c->nnew & (BP_PY_NEW_MAX - 1)] = line;
			c->nnew++;
		}
	}
	c->last = code;
	return 0;
}

/*
 * The walk's new code objects, one bpf_loop() callback each: unrolled, the
 * verifier walked py_emit_code() once per slot, a third of bp_oncpu's
 * verification (107,000 of 279,000 instructions, log level 4).
 */
static long py_emit_one(__u32 i, void *data)
{
	struct py_walk_ctx *c = data;

	py_emit_code(c->tgid, c->sc->new_code[i & (BP_PY_NEW_MAX - 1)],
		     c->sc->new_line[i & (BP_PY_NEW_MAX - 1)]);
	return 0;
}

/*
 * Walk the sampled thread's Python frames, innermost first, and store the
 * stack; its hash, or 0 when the thread runs no Python.
 */
static __always_inline __u64 py_store_stack(struct task_struct *task, __u32 tgid, __u32 tid,
					    __u32 idx)
{
	struct py_walk_ctx c = { .tgid = tgid };
	struct bp_py_scratch *sc;
	struct bp_py_proc *py;
	__u64 ts, h, want;
	__u32 zero = 0, ts_read;
	void *map;
	long err;

	if (!py_walk)
		return 0;
	py = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!py)
		return 0;
	sc = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!sc)
		return 0;
	ts = py_tstate(py, task);
	if (!ts)
		return 0;
	ts_read = py->ts_read;
	if (ts_read > BP_PY_TS_READ_MAX)
		ts_read = BP_PY_TS_READ_MAX;
	if (bpf_probe_read_user(sc->ts, ts_read, (void *)ts)) {
		stat_inc(BP_STAT_PY_TSTATE_ERR);
		return 0;
	}
	/* a key's value that is another thread's state: never walk a stack not ours */
	want = py->tid_kind == BP_PY_TID_NATIVE ? tid : BPF_CORE_READ(task, thread.fsbase);
	if (py_rd64(sc->ts, py->ts_tid, BP_PY_TS_READ_MAX) != want) {
		stat_inc(BP_STAT_PY_TSTATE_ERR);
		return 0;
	}
	c.frame = py_rd64(sc->ts, py->ts_frame, BP_PY_TS_READ_MAX);
	if (c.frame && py->cf_frame != BP_PY_NONE &&
	    bpf_probe_read_user(&c.frame, sizeof(c.frame), (void *)(c.frame + py->cf_frame))) {
		stat_inc(BP_STAT_PY_TSTATE_ERR);
		return 0;
	}
	c.py = py;
	c.sc = sc;
	c.f_read = py->f_read > BP_PY_FRAME_READ_MAX ? BP_PY_FRAME_READ_MAX : py->f_read;
	bpf_loop(BP_MAX_STACK_DEPTH + 1, py_walk_frame, &c, 0);
	if (c.frame && c.n >= BP_MAX_STACK_DEPTH)
		stat_inc(BP_STAT_PY_TRUNC);
	if (c.nnew)
		bpf_loop(c.nnew < BP_PY_NEW_MAX ? c.nnew : BP_PY_NEW_MAX, py_emit_one, &c, 0);
	if (!c.n || c.n > BP_MAX_STACK_DEPTH)
		return 0;
	/* the outermost frame ends the last run */
	sc->st.ips[(c.n - 1) & 127] |= BP_PY_RUN_END;
	sc->st.nr = c.n;
	sc->st.flags = 0;
	h = bp_hash_stack(&sc->st);
	map = idx ? (void *)&pystacks1 : (void *)&pystacks0;
	err = bpf_map_update_elem(map, &h, &sc->st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_inc(BP_STAT_STACK_FULL);
		return 0;
	}
	if (!err)
		pend_add(&pend_rows[BP_PEND_STACKS]);
	return h;
}

/*
 * A thread blocking in futex on an address inside its interpreter's GIL
 * state (gil_lo..gil_hi, from userspace) waits for the GIL: take_gil()
 * waits on the GIL's condition variable and mutex, drop_gil() on its
 * switch condition, all members of that struct.
 */
static __always_inline __u32 py_gil_wait(__u32 tgid, struct pt_regs *regs)
{
	struct bp_py_proc *py;
	__u64 uaddr;

	if (!regs || regs->orig_ax != 202 /* futex, x86-64 */)
		return 0;
	py = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!py || !py->gil_hi)
		return 0;
	uaddr = regs->di;
	return uaddr >= py->gil_lo && uaddr < py->gil_hi;
}

#endif /* BP_PYTHON_BPF_H */
