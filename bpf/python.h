/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python part of the ABI between the BPF programs and userspace: what
 * userspace tells the on-CPU program about each CPython process (where its
 * thread states are, the offsets of its minor version), how a Python stack
 * is encoded, and the record that carries a newly seen code object's names
 * and line table (docs/python.md). Fixed-width types, explicit padding.
 */
#ifndef BP_PYTHON_H
#define BP_PYTHON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * A Python stack is a bp_stack whose words are frames, innermost first:
 * bits 0..43 the code object's address >> 3 (objects are 8-aligned and
 * user addresses below 2^47), bit 44 set on the outermost frame of a run
 * (the frames one call of the interpreter loop executes), bits 45..63 the
 * instruction index in code units, clamped.
 */
#define BP_PY_CODE_SHIFT	3
#define BP_PY_CODE_BITS		44
#define BP_PY_RUN_END		(1ULL << 44)
#define BP_PY_IDX_SHIFT		45
#define BP_PY_IDX_MAX		((1ULL << 19) - 1)

static inline __u64 bp_py_word(__u64 code, __u64 idx, int run_end)
{
	if (idx > BP_PY_IDX_MAX)
		idx = BP_PY_IDX_MAX;
	return ((code >> BP_PY_CODE_SHIFT) & ((1ULL << BP_PY_CODE_BITS) - 1)) |
	       (run_end ? BP_PY_RUN_END : 0) | idx << BP_PY_IDX_SHIFT;
}

static inline __u64 bp_py_word_code(__u64 w)
{
	return (w & ((1ULL << BP_PY_CODE_BITS) - 1)) << BP_PY_CODE_SHIFT;
}

static inline __u32 bp_py_word_idx(__u64 w)
{
	return (__u32)(w >> BP_PY_IDX_SHIFT);
}

/* where a frame says which instruction it runs */
enum bp_py_lasti {
	BP_PY_LASTI_BYTES = 0,	/* int f_lasti, a byte offset (3.6 - 3.9) */
	BP_PY_LASTI_UNITS = 1,	/* int f_lasti, in code units (3.10) */
	BP_PY_LASTI_PTR = 2,	/* a pointer into co_code_adaptive (3.11+) */
};

/* how the chain of frames splits into runs of one interpreter call */
enum bp_py_entry {
	BP_PY_ENTRY_EACH = 0,	/* every frame is its own call (3.6 - 3.10) */
	BP_PY_ENTRY_FLAG = 1,	/* a bool set on a run's outermost frame (3.11 is_entry) */
	BP_PY_ENTRY_SHIM = 2,	/* a byte equal to 3 marks a shim frame between runs,
				 * not itself Python code (3.12+ owner == FRAME_OWNED_BY_CSTACK) */
};

/* how a thread state names its thread, checked against the sampled thread */
enum bp_py_tid {
	BP_PY_TID_PTHREAD = 0,	/* thread_id: pthread_self(), which is the thread pointer */
	BP_PY_TID_NATIVE = 1,	/* native_thread_id: the kernel's tid (3.11+) */
};

/*
 * One CPython process, keyed by tgid in py_procs: filled by userspace when
 * it finds the interpreter (collect/python.c), removed by the BPF side at
 * exec and exit so that a new image never gets an old one's offsets.
 */
struct bp_py_proc {
	__u64 key_addr;		/* the pthread key holding each thread's PyThreadState */
	__u64 none_addr;	/* &_Py_NoneStruct: a 3.13 shim frame's f_executable */
	__u64 gil_lo, gil_hi;	/* the GIL's state: futex waits inside it are GIL waits */
	__u32 tsd_off;		/* *(thread pointer + tsd_off + key * tsd_size) = the value */
	__u32 tsd_size;
	__s32 key;		/* cached by the BPF side once valid; -1 until then */
	__u16 version;		/* major << 8 | minor */
	__u8 lasti_kind;	/* enum bp_py_lasti */
	__u8 entry_kind;	/* enum bp_py_entry */
	__u8 tid_kind;		/* enum bp_py_tid */
	__u8 key_tss;		/* key_addr is a Py_tss_t {int initialized; int key} (3.7+),
				 * else an int that is -1 until set (3.6 autoTLSkey) */
	__u8 pad0[2];
	__u16 ts_read;		/* bytes of PyThreadState read: covers ts_frame and ts_tid */
	__u16 ts_frame;		/* the current frame (<= 3.10, 3.13+) or the cframe (3.11, 3.12) */
	__u16 cf_frame;		/* cframe->current_frame; BP_PY_NONE without a cframe */
	__u16 ts_tid;
	__u16 f_read;		/* bytes of a frame read: covers every field below */
	__u16 f_back;		/* the caller's frame */
	__u16 f_code;		/* the code object (f_code, f_executable) */
	__u16 f_lasti;		/* f_lasti, prev_instr or instr_ptr */
	__u16 f_entry;		/* is_entry, or owner; BP_PY_NONE for BP_PY_ENTRY_EACH */
	__u16 co_firstlineno;
	__u16 co_filename;
	__u16 co_name;		/* co_qualname where it exists (3.11+), else co_name */
	__u16 co_linetable;	/* co_linetable (3.10+) or co_lnotab */
	__u16 co_code;		/* offsetof co_code_adaptive (3.11+) */
	__u16 str_state;	/* PyASCIIObject.state */
	__u16 str_ascii;	/* sizeof(PyASCIIObject): compact ASCII text */
	__u16 str_compact;	/* sizeof(PyCompactUnicodeObject): other compact text */
	__u16 pad1;
};

#define BP_PY_NONE		0xffff
#define BP_PY_TS_READ_MAX	256
#define BP_PY_FRAME_READ_MAX	128

/* PyASCIIObject's length and state, and the state's bits: the same from 3.6 to 3.13 */
#define BP_PY_STR_LEN		16
#define BP_PY_STR_STATE		32
#define BP_PY_STATE_KIND_SHIFT	2
#define BP_PY_STATE_KIND_MASK	7
#define BP_PY_STATE_COMPACT	(1U << 5)
#define BP_PY_STATE_ASCII	(1U << 6)

/*
 * A newly seen code object, as the BPF side copies it at its first sample:
 * the name and file raw (their text in the kind the string is stored in)
 * and the line table's bytes, each cut at its slot's size. The record on
 * the ring is the header and name and file slots whole, then table_len
 * bytes of the table. Userspace decodes it per version (symbolize/
 * python_code.c) and fetches what was cut from the living process.
 */
#define BP_PY_NAME_MAX		256
#define BP_PY_FILE_MAX		1024
#define BP_PY_TABLE_MAX		16384

/* bp_py_str.flags */
#define BP_PY_STR_ASCII		1
#define BP_PY_STR_ERR		2	/* unreadable, or not a compact string */

struct bp_py_str {
	__u64 addr;		/* the string object */
	__u64 len;		/* its length in characters */
	__u16 copied;		/* bytes copied */
	__u8 kind;		/* bytes per character: 1, 2 or 4 */
	__u8 flags;
	__u32 pad;
};

#define BP_PY_EV_CODE		1

/* bp_py_code_ev.flags */
#define BP_PY_CODE_TABLE_ERR	1	/* the line table was unreadable */

struct bp_py_code_ev {
	__u32 kind;		/* BP_PY_EV_CODE */
	__u32 tgid;
	__u64 code;		/* the code object's address */
	__s32 firstlineno;
	__u16 version;
	__u16 flags;
	struct bp_py_str name;
	struct bp_py_str file;
	__u64 table_addr;	/* the line table's bytes object */
	__u64 table_size;	/* its size in bytes */
	__u32 table_len;	/* bytes of it that follow */
	__u32 pad;
	__u8 name_text[BP_PY_NAME_MAX];
	__u8 file_text[BP_PY_FILE_MAX];
	__u8 table[BP_PY_TABLE_MAX];
};

#define BP_PY_EV_FIXED		(sizeof(struct bp_py_code_ev) - BP_PY_TABLE_MAX)

#endif /* BP_PYTHON_H */
