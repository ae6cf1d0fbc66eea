/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GNU R frames, walked at sample time (docs/r.md). For a process userspace
 * has found to be R (r_procs), the chain of evaluation contexts from
 * R_GlobalContext is read back to the first, as Rprof does: each function
 * context becomes a frame, the function's symbol and the line its body was
 * running (from the srcref, or from the byte code's location table). The
 * stack is stored with the Python stacks (BP_STACK_R) and its hash goes
 * into the sample's key. A symbol or source file seen for the first time
 * is sent to userspace at once (on the Python ring), so that an R that
 * exits before the next drain keeps its names.
 */
#ifndef BP_RLANG_BPF_H
#define BP_RLANG_BPF_H

#include "common.bpf.h"
#include "stacks.bpf.h"
#include "python.bpf.h"
#include "rstack.h"

/* contexts looked at per sample, kept or not */
#define BP_R_CTX_MAX		128
/* names and files sent per sample at most: the rest in later samples */
#define BP_R_NEW_MAX		8

struct bp_r_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	/* written by userspace, an element a process: nothing to preallocate */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct bp_r_proc);
};
BP_EXTERN struct bp_r_procs_map r_procs SEC(".maps");

struct bp_r_seen_key {
	__u64 addr;
	__u32 tgid;
	__u32 kind;
};

/* symbols and source files already sent; an evicted one is sent again */
BP_INTERP_CACHE_MAPS(bp_r_seen, struct bp_r_seen_key, __u8);
BP_EXTERN struct bp_r_seen_map r_seen SEC(".maps");

struct bp_r_loc_key {
	__u64 a;		/* the byte code, or the srcref */
	__u64 pc;		/* the pc in it; ~0 for a srcref */
	__u32 tgid;
	__u32 pad;
};

/* locations already read: a frame word without its symbol */
BP_INTERP_CACHE_MAPS(bp_r_locs, struct bp_r_loc_key, __u64);
BP_EXTERN struct bp_r_locs_map r_locs SEC(".maps");

/* a node's header and first three words (CAR/CDR/TAG, or a vector's length): one read */
struct r_node {
	__u64 info;		/* sxpinfo: TYPEOF in the low 5 bits, ALTREP bit 7 */
	__u64 attrib;
	__u64 gc[2];
	__u64 w[2];		/* CAR, CDR / length, truelength */
};

/*
 * The walk's state: in the scratch rather than on the stack, where 6.1's
 * verifier found bp_oncpu, r_store_stack, the context callback and r_loc
 * together 64 bytes over its 512 ("combined stack size of 4 calls").
 */
struct bp_r_walk {
	__u64 cx;		/* the context to look at next */
	/* where the next kept frame's body runs: a srcref, or byte code and its pc */
	__u64 loc_srcref;
	__u64 loc_body;
	__u64 loc_pc;		/* absolute, or in code slots when loc_rel */
	__u32 loc_rel;
	__u32 tgid;
	__u32 n;		/* frames kept */
	__u32 nnew;
};

struct bp_r_scratch {
	struct bp_stack st;
	__u8 cx[512];		/* BP_R_CTX_SPAN of them read */
	struct bp_r_ev ev;
	struct bp_r_walk w;
	struct r_node node;	/* the call of the context being looked at */
};

struct bp_r_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_r_scratch);
};
BP_EXTERN struct bp_r_scratch_map r_scratch SEC(".maps");

BP_EXTERN const volatile __u8 r_walk;

/*
 * The walk's functions are global (verified once each, apart from their
 * callers, which keeps bp_oncpu's verification small) and live in the
 * on-CPU object only: proc.bpf.c includes this header for the maps.
 */
#ifndef BP_DEFINE


static __always_inline __u64 r_rd(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* TYPEOF, or -1 when unreadable; *altrep set for an ALTREP object */
static __always_inline int r_type(__u64 x, bool *altrep)
{
	__u8 b0;

	if (!x || (x & 7) || bpf_probe_read_user(&b0, 1, (void *)x))
		return -1;
	*altrep = b0 & BP_R_ALTREP;
	return b0 & BP_R_TYPE_MASK;
}

/* a symbol or source file to userspace, once per process */
__noinline int r_emit(__u32 tgid, __u64 addr, __u32 kind)
{
	struct bp_r_seen_key sk = { .addr = addr, .tgid = tgid, .kind = kind };
	void *seen = bp_interp_cache(&r_seen);
	struct bp_r_scratch *sc;
	__u64 pname = 0;
	__u32 zero = 0;
	__u8 one = 1;
	long n = 0;

	if (!seen || bpf_map_lookup_elem(seen, &sk))
		return 0;
	sc = bpf_map_lookup_elem(&r_scratch, &zero);
	if (!sc)
		return 0;
	if (bpf_map_update_elem(seen, &sk, &one, BPF_NOEXIST))
		return 0;
	sc->ev.kind = kind;
	sc->ev.tgid = tgid;
	sc->ev.addr = addr;
	sc->ev.len = 0;
	sc->ev.name[0] = 0;
	if (kind == BP_R_EV_SYM) {
		/* PRINTNAME is a CHARSXP: its text at 48, NUL-terminated */
		if (!bpf_probe_read_user(&pname, sizeof(pname), (void *)(addr + BP_R_CAR)) && pname)
			n = bpf_probe_read_user_str(sc->ev.name, BP_R_NAME_MAX,
						    (void *)(pname + BP_R_VDATA));
		if (n <= 0) {
			bpf_map_delete_elem(seen, &sk);
			stat_inc(BP_STAT_R_CTX_ERR);
			return 0;
		}
		sc->ev.len = n - 1;
	}
	if (bpf_ringbuf_output(&py_events, &sc->ev, sizeof(sc->ev), 0)) {
		bpf_map_delete_elem(seen, &sk);
		stat_inc(BP_STAT_R_NAME_LOST);
	}
	return 1;
}

static __always_inline void r_new(struct bp_r_walk *c, __u64 addr, __u32 kind)
{
	if (!addr || c->nnew >= BP_R_NEW_MAX)
		return;
	c->nnew += r_emit(c->tgid, addr, kind);
}


static __always_inline int r_node(__u64 x, struct r_node *n, int type)
{
	if (!x || (x & 7) || bpf_probe_read_user(n, sizeof(*n), (void *)x))
		return -1;
	if ((n->info & BP_R_TYPE_MASK) != (__u64)type)
		return -1;
	return 0;
}

/*
 * The line a srcref names (its first int) and its srcfile attribute; the
 * location of byte code is its constant pool's srcref for the pc, as in
 * R_findBCInterpreterLocation(): the last constant is the "srcrefsIndex"
 * table when the source had srcrefs, one constant index per code slot.
 * Returned packed as a frame word: srcfile >> 3 | line << 45 (0: none).
 */
static __always_inline __u64 r_loc_read(struct bp_r_proc *r, __u64 sref, __u64 body, __u64 pc,
					__u32 rel_pc)
{
	struct r_node n;
	__u64 attrib, pl[3], srcfile = 0;
	__s32 line = 0;
	int i;

	if (sref == r->in_bc) {
		__u64 code, consts, nc, last, tlen, rel;
		__s32 idx = -1;

		if (r_node(body, &n, BP_R_BCODESXP))
			return 0;
		code = n.w[0];
		consts = n.w[1];
		if (r_node(consts, &n, BP_R_VECSXP) || (n.info & BP_R_ALTREP))
			return 0;
		nc = n.w[0];
		if (nc < 1 || nc > (1U << 24))
			return 0;
		last = r_rd(consts + BP_R_VDATA + 8 * (nc - 1));
		if (r_node(last, &n, BP_R_INTSXP) || (n.info & BP_R_ALTREP))
			return 0;
		tlen = n.w[0];
		if (rel_pc) {
			rel = pc;
		} else {
			if (!code || pc < code + BP_R_VDATA)
				return 0;
			rel = (pc - code - BP_R_VDATA) / 8;
		}
		if (rel >= tlen || rel > (1U << 24))
			return 0;
		if (bpf_probe_read_user(&idx, sizeof(idx), (void *)(last + BP_R_VDATA + 4 * rel)) ||
		    idx < 0 || (__u64)idx >= nc)
			return 0;
		sref = r_rd(consts + BP_R_VDATA + 8 * (__u64)idx);
	}
	if (r_node(sref, &n, BP_R_INTSXP) || (n.info & BP_R_ALTREP) || n.w[0] < 1)
		return 0;
	if (bpf_probe_read_user(&line, sizeof(line), (void *)(sref + BP_R_VDATA)) || line <= 0)
		return 0;
	attrib = n.attrib;
	/* srcref's attributes: srcfile and class */
	for (i = 0; i < 4; i++) {
		if (!attrib || attrib == r->nil ||
		    bpf_probe_read_user(pl, sizeof(pl), (void *)(attrib + BP_R_CAR)))
			break;
		if (pl[2] == r->srcfile_sym) {
			srcfile = pl[0];
			break;
		}
		attrib = pl[1];
	}
	return bp_r_word(srcfile, line, 0);
}

/*
 * The same, through r_locs: a byte-code body and pc (or a srcref) seen
 * before costs one lookup instead of a dozen reads. *fresh says it was
 * read now (its source file may be new to userspace).
 */
__noinline __u64 r_loc(__u32 tgid, __u64 sref, __u64 body, __u64 pc, __u32 rel_pc)
{
	struct bp_r_proc *r = bpf_map_lookup_elem(&r_procs, &tgid);
	struct bp_r_loc_key k = { .tgid = tgid };
	void *locs = bp_interp_cache(&r_locs);
	__u64 *hit, loc;

	if (!r || !sref || !locs)
		return 0;
	if (sref == r->in_bc) {
		k.a = body;
		k.pc = pc;
	} else {
		k.a = sref;
		k.pc = ~0ULL;
	}
	hit = bpf_map_lookup_elem(locs, &k);
	if (hit)
		return *hit;
	loc = r_loc_read(r, sref, body, pc, rel_pc);
	bpf_map_update_elem(locs, &k, &loc, BPF_ANY);
	return loc | BP_R_BUILTIN;	/* the bit says: read now */
}

/* the function a call names: f, pkg::f, pkg:::f or obj$f give f; 0 for anything else */
__noinline __u64 r_fun(__u32 tgid, __u64 head)
{
	struct bp_r_proc *r = bpf_map_lookup_elem(&r_procs, &tgid);
	struct r_node n;
	__u64 car, sym;
	bool alt;

	if (!r || !head || (head & 7) || bpf_probe_read_user(&n, sizeof(n), (void *)head))
		return 0;
	if ((n.info & BP_R_TYPE_MASK) == BP_R_SYMSXP)
		return head;
	if ((n.info & BP_R_TYPE_MASK) != BP_R_LANGSXP)
		return 0;
	car = n.w[0];
	if (!car || (car != r->dcolon && car != r->tcolon && car != r->dollar))
		return 0;
	sym = r_rd(r_rd(n.w[1] + BP_R_CDR) + BP_R_CAR);
	return r_type(sym, &alt) == BP_R_SYMSXP ? sym : 0;
}

static long r_walk_ctx(__u32 i, void *data)
{
	__u64 call, sym, srcfile, loc, next, flag;
	struct bp_r_scratch *sc;
	struct bp_r_walk *c;
	struct bp_r_proc *r;
	__u32 lo, zero = 0;

	sc = bpf_map_lookup_elem(&r_scratch, &zero);
	if (!sc)
		return 1;
	c = &sc->w;
	r = bpf_map_lookup_elem(&r_procs, &c->tgid);
	if (!r || !c->cx)
		return 1;
	lo = r->ctx_lo;
	/* one read per context: from nextcontext to past srcref (reads cost more than bytes) */
	if (bpf_probe_read_user(sc->cx, BP_R_CTX_SPAN, (void *)c->cx)) {
		stat_inc(BP_STAT_R_CTX_ERR);
		return 1;
	}
	next = py_rd64(sc->cx, 0, 512);
	flag = py_rd32(sc->cx, 8, 512);
	if (!(flag & (BP_R_CTXT_FUNCTION | BP_R_CTXT_BUILTIN)))
		goto next;
	call = py_rd64(sc->cx, lo + r->c_call, 512);
	/* a context a longjmp left behind reads as garbage: skip it */
	if (r_node(call, &sc->node, BP_R_LANGSXP))
		goto next;
	if (c->n >= BP_R_FRAMES_MAX) {
		stat_inc(BP_STAT_R_TRUNC);
		return 1;
	}
	sym = r_fun(c->tgid, sc->node.w[0]);
	loc = r_loc(c->tgid, c->loc_srcref, c->loc_body, c->loc_pc, c->loc_rel);
	srcfile = bp_r_word_sym(loc);
	sc->st.ips[(2 * c->n) & 127] = bp_r_word(sym, bp_r_word_line(loc),
						 flag & BP_R_CTXT_BUILTIN);
	sc->st.ips[(2 * c->n + 1) & 127] = srcfile;
	c->n++;
	r_new(c, sym, BP_R_EV_SYM);
	if (loc & BP_R_BUILTIN)
		r_new(c, srcfile, BP_R_EV_SRCFILE);
	/* this context saved where its caller was: the next frame's line */
	c->loc_srcref = py_rd64(sc->cx, lo + r->c_srcref, 512);
	c->loc_body = py_rd64(sc->cx, lo + r->c_bcbody, 512);
	c->loc_rel = r->pc_kind == BP_R_PC_REL;
	if (c->loc_rel)
		c->loc_pc = py_rd64(sc->cx, lo + r->c_relpc, 512);
	else
		c->loc_pc = r_rd(py_rd64(sc->cx, lo + r->c_bcpc, 512));
next:
	c->cx = next;
	return 0;
}

/*
 * Walk the R contexts of the sampled thread, innermost first, and store
 * the stack; its hash, or 0 when the thread runs no R. R evaluates on one
 * thread, the process's first: its BLAS or OpenMP threads get no R frames.
 */
__noinline __u64 r_store_stack(__u32 tgid, __u32 tid, __u32 idx)
{
	struct bp_r_scratch *sc;
	struct bp_r_walk *c;
	struct bp_r_proc *r;
	__u64 h;
	__u32 zero = 0;
	void *map;
	long err;

	if (!r_walk || tid != tgid)
		return 0;
	r = bpf_map_lookup_elem(&r_procs, &tgid);
	if (!r)
		return 0;
	sc = bpf_map_lookup_elem(&r_scratch, &zero);
	if (!sc)
		return 0;
	c = &sc->w;
	__builtin_memset(c, 0, sizeof(*c));
	c->tgid = tgid;
	c->cx = r_rd(r->global_ctx);
	if (!c->cx)
		return 0;
	c->loc_srcref = r_rd(r->srcref);
	if (c->loc_srcref == r->in_bc && r->bc_body) {
		c->loc_body = r_rd(r->bc_body);
		c->loc_pc = r_rd(r_rd(r->bc_pc));
	}
	bpf_loop(BP_R_CTX_MAX, r_walk_ctx, NULL, 0);
	if (!c->n || c->n > BP_R_FRAMES_MAX)
		return 0;
	sc->st.nr = 2 * c->n;
	sc->st.flags = BP_STACK_R;
	h = bp_hash_stack(&sc->st);
	map = idx ? (void *)&pystacks1 : (void *)&pystacks0;
	err = bpf_map_update_elem(map, &h, &sc->st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_inc(BP_STAT_STACK_FULL);
		return 0;
	}
	return h;
}

#endif /* !BP_DEFINE */

#endif /* BP_RLANG_BPF_H */
