/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython's layouts, one row per minor version: where a thread state keeps
 * its frame, a frame its code and instruction, a code object its names and
 * line table, and where the runtime keeps the thread-state key and the
 * GIL. The rows are data, checked by `make test` against the headers of
 * every interpreter installed (tests/python/layout_check.c); 3.13 and later
 * take the walk's offsets from the interpreter's own _Py_DebugOffsets and
 * keep here only what that struct does not say. docs/python.md has the why.
 */
#ifndef BP_PYTHON_LAYOUT_H
#define BP_PYTHON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python.h"

#define BP_PY_MINOR_MIN		6
#define BP_PY_MINOR_MAX		13

struct bp_py_layout {
	uint8_t minor;			/* 3.minor */
	uint8_t lasti_kind;		/* enum bp_py_lasti */
	uint8_t entry_kind;		/* enum bp_py_entry */
	uint8_t tid_kind;		/* enum bp_py_tid */
	/* PyThreadState */
	uint16_t ts_frame;		/* frame, cframe or current_frame */
	uint16_t cf_frame;		/* _PyCFrame.current_frame, BP_PY_NONE */
	uint16_t ts_tid;		/* thread_id or native_thread_id */
	/* the frame: PyFrameObject (<= 3.10) or _PyInterpreterFrame */
	uint16_t f_back, f_code, f_lasti;
	uint16_t f_entry;		/* is_entry or owner, BP_PY_NONE */
	/* PyCodeObject */
	uint16_t co_firstlineno, co_filename, co_name, co_linetable;
	uint16_t code_basicsize;	/* PyCode_Type.tp_basicsize: co_code_adaptive in 3.11+ */
	/* str */
	uint16_t str_state, str_ascii, str_compact;
	/*
	 * _PyRuntime: the pthread key's Py_tss_t (0 in 3.6, where the key is
	 * the static int autoTLSkey), the GIL's state struct in it (3.7 -
	 * 3.11), or the main interpreter's pointer and the interpreter's
	 * pointer to its GIL (3.12+); -1 where it does not apply.
	 */
	int32_t rt_key;
	int32_t rt_gil;
	int32_t rt_main_interp;
	int32_t interp_gil;
	uint32_t gil_size;		/* sizeof(struct _gil_runtime_state) */
	/* 3.13+: the debug offsets' fields, at these places in _Py_DebugOffsets */
	bool debug_offsets;
};

/* the row of 3.minor, or NULL when boundprof does not know it */
const struct bp_py_layout *bp_py_layout(unsigned int minor);

/*
 * _Py_DebugOffsets (3.13+): the first member of _PyRuntime, whose initial
 * value is in the interpreter's file. Where each value we use sits in it,
 * for 3.13 (the struct changes between minor versions).
 */
#define BP_PY_DBG_SIZE			584
#define BP_PY_DBG_VERSION		8
#define BP_PY_DBG_FREE_THREADED		16
#define BP_PY_DBG_TS_CURRENT_FRAME	184
#define BP_PY_DBG_TS_NATIVE_TID		200
#define BP_PY_DBG_IF_PREVIOUS		232
#define BP_PY_DBG_IF_EXECUTABLE		240
#define BP_PY_DBG_IF_INSTR_PTR		248
#define BP_PY_DBG_IF_OWNER		264
#define BP_PY_DBG_CO_FILENAME		280
#define BP_PY_DBG_CO_QUALNAME		296
#define BP_PY_DBG_CO_LINETABLE		304
#define BP_PY_DBG_CO_FIRSTLINENO	312
#define BP_PY_DBG_CO_CODE_ADAPTIVE	344
#define BP_PY_DBG_STR_STATE		544
#define BP_PY_DBG_STR_ASCII_SIZE	560

/*
 * Take the walk's offsets from a 3.13 _Py_DebugOffsets image into *l
 * (a copy of the 3.13 row): 0, or -EINVAL when the cookie, the version or
 * a value is not what a 3.13 interpreter has (each offset must fit the
 * reads of bpf/python.bpf.h). *free_threaded tells the no-GIL build.
 */
int bp_py_layout_from_debug(const uint8_t *dbg, size_t len, uint32_t hexversion,
			    struct bp_py_layout *l, bool *free_threaded);

/* fill the BPF side's view of a layout (offsets, kinds, read sizes) */
void bp_py_layout_to_proc(const struct bp_py_layout *l, struct bp_py_proc *out);

#endif /* BP_PYTHON_LAYOUT_H */
