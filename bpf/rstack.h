/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The R part of the ABI between the BPF programs and userspace: what
 * userspace tells the on-CPU program about each GNU R process (where its
 * globals are, the offsets of its context struct), how an R stack is
 * encoded, and the records that carry a newly seen function name or source
 * file to userspace (docs/r.md). Fixed-width types, explicit padding.
 */
#ifndef BP_RSTACK_H
#define BP_RSTACK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * An R stack is a bp_stack with BP_STACK_R in its flags (stored with the
 * Python stacks: a process runs one of the two) whose words come in pairs,
 * innermost frame first:
 *   word 0: bits 0..43 the function's symbol (a SYMSXP) >> 3, 0 for an
 *           anonymous function; bit 44 set for a builtin's context; bits
 *           45..63 the line running in the frame, 0 when unknown;
 *   word 1: the srcfile environment of that line, 0 when unknown.
 * A SYMSXP lives as long as the process (the symbol table is a GC root),
 * so its address names the function for good.
 */
#define BP_STACK_R		2
#define BP_R_SYM_SHIFT		3
#define BP_R_SYM_BITS		44
#define BP_R_BUILTIN		(1ULL << 44)
#define BP_R_LINE_SHIFT		45
#define BP_R_LINE_MAX		((1ULL << 19) - 1)
#define BP_R_FRAMES_MAX		63	/* two words each in a bp_stack */

static inline __u64 bp_r_word(__u64 sym, __u64 line, int builtin)
{
	if (line > BP_R_LINE_MAX)
		line = 0;
	return ((sym >> BP_R_SYM_SHIFT) & ((1ULL << BP_R_SYM_BITS) - 1)) |
	       (builtin ? BP_R_BUILTIN : 0) | line << BP_R_LINE_SHIFT;
}

static inline __u64 bp_r_word_sym(__u64 w)
{
	return (w & ((1ULL << BP_R_SYM_BITS) - 1)) << BP_R_SYM_SHIFT;
}

static inline __u32 bp_r_word_line(__u64 w)
{
	return (__u32)(w >> BP_R_LINE_SHIFT);
}

/* RCNTXT.callflag bits (Defn.h, the same in 3.6 - 4.4) */
#define BP_R_CTXT_FUNCTION	4
#define BP_R_CTXT_BUILTIN	64

/* SEXPTYPEs (Rinternals.h) */
#define BP_R_SYMSXP		1
#define BP_R_LISTSXP		2
#define BP_R_CLOSXP		3
#define BP_R_ENVSXP		4
#define BP_R_LANGSXP		6
#define BP_R_INTSXP		13
#define BP_R_VECSXP		19
#define BP_R_BCODESXP		21

/*
 * The SEXP layout of R 4.x on x86-64, the same from 4.0 to 4.4: the header
 * (sxpinfo, attrib, two GC links) then CAR/CDR/TAG, PRINTNAME, or a
 * vector's length and its data at 48.
 */
#define BP_R_ATTRIB		8
#define BP_R_CAR		32
#define BP_R_CDR		40
#define BP_R_TAG		48
#define BP_R_VLEN		32
#define BP_R_VDATA		48
#define BP_R_TYPE_MASK		0x1f
#define BP_R_ALTREP		0x80

/* a context is read whole from its start, this many bytes: to past srcref in 4.0 - 4.5 */
#define BP_R_CTX_SPAN		408

/* bp_r_proc.pc_kind: how a context says where its caller's byte code was */
enum bp_r_pc {
	BP_R_PC_PTR = 0,	/* bcpc points at the caller's pc (4.0 - 4.3) */
	BP_R_PC_REL = 1,	/* relpc, in code slots (4.4+) */
};

/*
 * One R process, keyed by tgid in r_procs: filled by userspace when it
 * finds libR (collect/rlang.c), removed by the BPF side at exec and exit.
 * Addresses are the process's; offsets into RCNTXT are from ctx_lo.
 */
struct bp_r_proc {
	__u64 global_ctx;	/* &R_GlobalContext */
	__u64 srcref;		/* &R_Srcref: the newest frame's statement */
	__u64 bc_body;		/* &R_BCbody, 0: unknown (no line for the newest BC frame) */
	__u64 bc_pc;		/* &R_BCpc */
	__u64 in_bc;		/* the value of R_InBCInterpreter */
	__u64 nil;		/* the value of R_NilValue */
	__u64 srcfile_sym;	/* the value of R_SrcfileSymbol */
	__u64 dcolon, tcolon, dollar;	/* the ::, ::: and $ symbols */
	__u16 ctx_lo;		/* offset of the first field read: call */
	__u16 c_call;		/* offsets from ctx_lo */
	__u16 c_bcbody;
	__u16 c_bcpc;
	__u16 c_relpc;
	__u16 c_srcref;
	__u8 pc_kind;		/* enum bp_r_pc */
	__u8 pad[3];
};

#define BP_R_EV_SYM		2	/* after BP_PY_EV_CODE: the same ring */
#define BP_R_EV_SRCFILE		3
#define BP_R_NAME_MAX		128

/* a function's symbol seen for the first time, with its name copied */
struct bp_r_ev {
	__u32 kind;		/* BP_R_EV_SYM or BP_R_EV_SRCFILE */
	__u32 tgid;
	__u64 addr;		/* the SYMSXP, or the srcfile environment */
	__u32 len;		/* of the name: bytes copied, without the NUL */
	__u32 pad;
	__u8 name[BP_R_NAME_MAX];	/* BP_R_EV_SYM; a srcfile is read by userspace */
};

#endif /* BP_RSTACK_H */
