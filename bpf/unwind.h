/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One unwind step on x86-64: from a frame's registers (pc, sp, bp) and the
 * row that covers its pc, the caller's registers. Shared by the BPF walker
 * (bpf/unwind.bpf.h) and the tests that check it against libdw's own
 * unwinder, so both run the very same rules.
 *
 * The includer defines BP_UW_READ(ctx, addr, dst): read the 8-byte word at
 * user address addr into *dst, 0 or an error.
 */
#ifndef BP_UNWIND_H
#define BP_UNWIND_H

#include "boundprof.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

struct bp_uw_regs {
	__u64 pc, sp, bp;
	__u32 exact;		/* pc is where the thread was, not a return address */
	__u32 pad;
};

/* what a step says */
enum bp_uw_res {
	BP_UW_NEXT = 0,		/* regs now hold the caller's frame */
	BP_UW_END,		/* that was the outermost frame: the stack is whole */
	BP_UW_CUT_READ,		/* a read of the stack failed */
	BP_UW_CUT_INVALID,	/* a rule that cannot be applied, or one that leads nowhere */
	BP_UW_CUT_FP,		/* no CFI, and the frame pointer is not a frame's */
};

/* a frame-pointer chain's step may go at most this far up the stack */
#define BP_UW_FP_SPAN	(8ULL << 20)

/*
 * The x86-64 signal frame as the kernel writes it: after the handler's
 * return the stack pointer is at struct rt_sigframe's uc (the return
 * address, pretcode, was popped); uc_mcontext is 40 bytes into the
 * ucontext (uc_flags, uc_link, uc_stack) and holds the general registers
 * in the order r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
 */
#define BP_UW_SIGCTX_OFF	40
#define BP_UW_SIGCTX_BP		10
#define BP_UW_SIGCTX_SP		15
#define BP_UW_SIGCTX_IP		16

/* the address the row for this frame is looked up at */
static __always_inline __u64 bp_uw_lookup_pc(const struct bp_uw_regs *r)
{
	/* a return address may be the first byte of the next function */
	return r->exact || !r->pc ? r->pc : r->pc - 1;
}

/* row == NULL: no CFI covers pc (frame-pointer step) */
static __always_inline int bp_uw_step(void *ctx, const struct bp_uw_row *row,
				      struct bp_uw_regs *r)
{
	__u64 cfa, ra = 0, bp = r->bp, base = r->sp;
	__u8 kind = row ? row->kind : BP_UW_FP;
	__s64 off;

	switch (kind) {
	case BP_UW_STOP:
		return BP_UW_END;
	case BP_UW_SIGNAL:
		base = r->sp + BP_UW_SIGCTX_OFF;
		if (BP_UW_READ(ctx, base + 8 * BP_UW_SIGCTX_IP, &ra) ||
		    BP_UW_READ(ctx, base + 8 * BP_UW_SIGCTX_SP, &cfa) ||
		    BP_UW_READ(ctx, base + 8 * BP_UW_SIGCTX_BP, &bp))
			return BP_UW_CUT_READ;
		r->pc = ra;
		r->sp = cfa;
		r->bp = bp;
		r->exact = 1;
		return ra ? BP_UW_NEXT : BP_UW_END;
	case BP_UW_FP:
		/* the ABI's end of the chain: _start clears rbp */
		if (!r->bp)
			return BP_UW_END;
		if (r->bp < r->sp || r->bp - r->sp > BP_UW_FP_SPAN || (r->bp & 7))
			return BP_UW_CUT_FP;
		if (BP_UW_READ(ctx, r->bp + 8, &ra) || BP_UW_READ(ctx, r->bp, &bp))
			return BP_UW_CUT_READ;
		cfa = r->bp + 16;
		break;
	case BP_UW_CFA_SP:
	case BP_UW_CFA_BP:
	case BP_UW_CFA_DEREF_BP:
		off = 8 * (__s64)row->cfa;
		if (kind == BP_UW_CFA_SP) {
			cfa = r->sp + off;
		} else if (kind == BP_UW_CFA_BP) {
			cfa = r->bp + off;
		} else {
			if (BP_UW_READ(ctx, r->bp + off, &cfa))
				return BP_UW_CUT_READ;
		}
		if (BP_UW_READ(ctx, cfa - 8, &ra))
			return BP_UW_CUT_READ;
		if (row->bp == BP_UW_BP_AT_BP) {
			if (BP_UW_READ(ctx, r->bp, &bp))
				return BP_UW_CUT_READ;
		} else if (row->bp != BP_UW_BP_SAME) {
			if (BP_UW_READ(ctx, cfa + 8 * (__s64)row->bp, &bp))
				return BP_UW_CUT_READ;
		}
		break;
	case BP_UW_PLT:
		cfa = r->sp + 8 + ((r->pc & 15) >= (__u64)row->cfa ? 8 : 0);
		if (BP_UW_READ(ctx, cfa - 8, &ra))
			return BP_UW_CUT_READ;
		break;
	default:
		return BP_UW_CUT_INVALID;
	}
	/* every caller's frame lies above its callee's: anything else loops */
	if (cfa <= base)
		return kind == BP_UW_FP ? BP_UW_CUT_FP : BP_UW_CUT_INVALID;
	r->pc = ra;
	r->sp = cfa;
	r->bp = bp;
	r->exact = 0;
	return ra ? BP_UW_NEXT : BP_UW_END;
}

#endif /* BP_UNWIND_H */
