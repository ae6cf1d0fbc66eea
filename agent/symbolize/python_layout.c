// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "symbolize/python_layout.h"

#define NONE	BP_PY_NONE

/*
 * x86-64, the default (non-debug) build of each version. Every number is
 * checked against that version's headers by tests/python/layout_check.c;
 * 3.11.2 (Debian) and 3.11.7 (pyenv) agree, as 3.11.0 - 3.11.8 do.
 */
static const struct bp_py_layout layouts[] = {
	{
		.minor = 6, .lasti_kind = BP_PY_LASTI_BYTES, .entry_kind = BP_PY_ENTRY_EACH,
		.tid_kind = BP_PY_TID_PTHREAD,
		.ts_frame = 24, .cf_frame = NONE, .ts_tid = 152,
		.f_back = 24, .f_code = 32, .f_lasti = 120, .f_entry = NONE,
		.co_firstlineno = 36, .co_filename = 96, .co_name = 104, .co_linetable = 112,
		.code_basicsize = 144,
		.str_state = 32, .str_ascii = 48, .str_compact = 72,
		/* the key is the static autoTLSkey; the GIL is four statics (see python_elf) */
		.rt_key = 0, .rt_gil = -1, .rt_main_interp = -1, .interp_gil = -1,
		.gil_size = 0,
	},
	{
		.minor = 7, .lasti_kind = BP_PY_LASTI_BYTES, .entry_kind = BP_PY_ENTRY_EACH,
		.tid_kind = BP_PY_TID_PTHREAD,
		.ts_frame = 24, .cf_frame = NONE, .ts_tid = 176,
		.f_back = 24, .f_code = 32, .f_lasti = 104, .f_entry = NONE,
		.co_firstlineno = 36, .co_filename = 96, .co_name = 104, .co_linetable = 112,
		.code_basicsize = 144,
		.str_state = 32, .str_ascii = 48, .str_compact = 72,
		.rt_key = 1504, .rt_gil = 1264, .rt_main_interp = -1, .interp_gil = -1,
		.gil_size = 208,
	},
	{
		.minor = 8, .lasti_kind = BP_PY_LASTI_BYTES, .entry_kind = BP_PY_ENTRY_EACH,
		.tid_kind = BP_PY_TID_PTHREAD,
		.ts_frame = 24, .cf_frame = NONE, .ts_tid = 176,
		.f_back = 24, .f_code = 32, .f_lasti = 104, .f_entry = NONE,
		.co_firstlineno = 40, .co_filename = 104, .co_name = 112, .co_linetable = 120,
		.code_basicsize = 176,
		.str_state = 32, .str_ascii = 48, .str_compact = 72,
		.rt_key = 1392, .rt_gil = 1152, .rt_main_interp = -1, .interp_gil = -1,
		.gil_size = 208,
	},
	{
		.minor = 9, .lasti_kind = BP_PY_LASTI_BYTES, .entry_kind = BP_PY_ENTRY_EACH,
		.tid_kind = BP_PY_TID_PTHREAD,
		.ts_frame = 24, .cf_frame = NONE, .ts_tid = 176,
		.f_back = 24, .f_code = 32, .f_lasti = 104, .f_entry = NONE,
		.co_firstlineno = 40, .co_filename = 104, .co_name = 112, .co_linetable = 120,
		.code_basicsize = 176,
		.str_state = 32, .str_ascii = 48, .str_compact = 72,
		.rt_key = 584, .rt_gil = 352, .rt_main_interp = -1, .interp_gil = -1,
		.gil_size = 208,
	},
	{
		.minor = 10, .lasti_kind = BP_PY_LASTI_UNITS, .entry_kind = BP_PY_ENTRY_EACH,
		.tid_kind = BP_PY_TID_PTHREAD,
		.ts_frame = 24, .cf_frame = NONE, .ts_tid = 176,
		.f_back = 24, .f_code = 32, .f_lasti = 96, .f_entry = NONE,
		.co_firstlineno = 40, .co_filename = 104, .co_name = 112, .co_linetable = 120,
		.code_basicsize = 176,
		.str_state = 32, .str_ascii = 48, .str_compact = 72,
		.rt_key = 584, .rt_gil = 352, .rt_main_interp = -1, .interp_gil = -1,
		.gil_size = 208,
	},
	{
		.minor = 11, .lasti_kind = BP_PY_LASTI_PTR, .entry_kind = BP_PY_ENTRY_FLAG,
		.tid_kind = BP_PY_TID_NATIVE,
		.ts_frame = 56, .cf_frame = 8, .ts_tid = 160,
		.f_back = 48, .f_code = 32, .f_lasti = 56, .f_entry = 68,
		.co_firstlineno = 72, .co_filename = 112, .co_name = 128, .co_linetable = 136,
		.code_basicsize = 184,
		.str_state = 32, .str_ascii = 48, .str_compact = 72,
		.rt_key = 592, .rt_gil = 360, .rt_main_interp = -1, .interp_gil = -1,
		.gil_size = 208,
	},
	{
		.minor = 12, .lasti_kind = BP_PY_LASTI_PTR, .entry_kind = BP_PY_ENTRY_SHIM,
		.tid_kind = BP_PY_TID_NATIVE,
		.ts_frame = 56, .cf_frame = 0, .ts_tid = 144,
		.f_back = 8, .f_code = 0, .f_lasti = 56, .f_entry = 70,
		.co_firstlineno = 68, .co_filename = 112, .co_name = 128, .co_linetable = 136,
		.code_basicsize = 192,
		.str_state = 32, .str_ascii = 40, .str_compact = 56,
		.rt_key = 1544, .rt_gil = -1, .rt_main_interp = 48, .interp_gil = 384,
		.gil_size = 208,
	},
	{
		/* the walk's offsets are replaced by the interpreter's _Py_DebugOffsets */
		.minor = 13, .lasti_kind = BP_PY_LASTI_PTR, .entry_kind = BP_PY_ENTRY_SHIM,
		.tid_kind = BP_PY_TID_NATIVE,
		.ts_frame = 72, .cf_frame = NONE, .ts_tid = 160,
		.f_back = 8, .f_code = 0, .f_lasti = 56, .f_entry = 70,
		.co_firstlineno = 68, .co_filename = 112, .co_name = 128, .co_linetable = 136,
		.code_basicsize = 200,
		.str_state = 32, .str_ascii = 40, .str_compact = 56,
		.rt_key = 2160, .rt_gil = -1, .rt_main_interp = 640, .interp_gil = 16,
		.gil_size = 208, .debug_offsets = true,
	},
};

const struct bp_py_layout *bp_py_layout(unsigned int minor)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

static uint64_t get64(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* an offset the BPF side can read within its fixed-size copies */
static int take(const uint8_t *dbg, size_t off, uint64_t max, uint16_t *out)
{
	uint64_t v = get64(dbg, off);

	if (v > max)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

int bp_py_layout_from_debug(const uint8_t *dbg, size_t len, uint32_t hexversion,
			    struct bp_py_layout *l, bool *free_threaded)
{
	uint64_t ver;
	int err = 0;

	if (len < BP_PY_DBG_SIZE || memcmp(dbg, "xdebugpy", 8))
		return -EINVAL;
	ver = get64(dbg, BP_PY_DBG_VERSION);
	/* the same minor version as the file says: the struct is per minor version */
	if ((ver >> 16) != (hexversion >> 16) || (ver >> 24) != 3 ||
	    ((ver >> 16) & 0xff) != l->minor)
		return -EINVAL;
	*free_threaded = get64(dbg, BP_PY_DBG_FREE_THREADED) != 0;
	err |= take(dbg, BP_PY_DBG_TS_CURRENT_FRAME, BP_PY_TS_READ_MAX - 8, &l->ts_frame);
	err |= take(dbg, BP_PY_DBG_TS_NATIVE_TID, BP_PY_TS_READ_MAX - 8, &l->ts_tid);
	err |= take(dbg, BP_PY_DBG_IF_PREVIOUS, BP_PY_FRAME_READ_MAX - 8, &l->f_back);
	err |= take(dbg, BP_PY_DBG_IF_EXECUTABLE, BP_PY_FRAME_READ_MAX - 8, &l->f_code);
	err |= take(dbg, BP_PY_DBG_IF_INSTR_PTR, BP_PY_FRAME_READ_MAX - 8, &l->f_lasti);
	err |= take(dbg, BP_PY_DBG_IF_OWNER, BP_PY_FRAME_READ_MAX - 1, &l->f_entry);
	err |= take(dbg, BP_PY_DBG_CO_FILENAME, 4096, &l->co_filename);
	err |= take(dbg, BP_PY_DBG_CO_QUALNAME, 4096, &l->co_name);
	err |= take(dbg, BP_PY_DBG_CO_LINETABLE, 4096, &l->co_linetable);
	err |= take(dbg, BP_PY_DBG_CO_FIRSTLINENO, 4096, &l->co_firstlineno);
	err |= take(dbg, BP_PY_DBG_CO_CODE_ADAPTIVE, 4096, &l->code_basicsize);
	err |= take(dbg, BP_PY_DBG_STR_STATE, 64, &l->str_state);
	err |= take(dbg, BP_PY_DBG_STR_ASCII_SIZE, 4096, &l->str_ascii);
	/* the BPF side reads a string's state where every version has kept it */
	if (err || l->str_state != BP_PY_STR_STATE)
		return -EINVAL;
	/* PyCompactUnicodeObject adds utf8_length and utf8 to the ASCII header */
	l->str_compact = l->str_ascii + 16;
	return 0;
}

static uint16_t read_end(uint16_t have, uint16_t off, uint16_t size)
{
	if (off == BP_PY_NONE)
		return have;
	return off + size > have ? off + size : have;
}

void bp_py_layout_to_proc(const struct bp_py_layout *l, struct bp_py_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->key = -1;
	out->version = 3 << 8 | l->minor;
	out->lasti_kind = l->lasti_kind;
	out->entry_kind = l->entry_kind;
	out->tid_kind = l->tid_kind;
	out->key_tss = l->minor >= 7;
	out->ts_frame = l->ts_frame;
	out->cf_frame = l->cf_frame;
	out->ts_tid = l->ts_tid;
	out->ts_read = read_end(read_end(0, l->ts_frame, 8), l->ts_tid, 8);
	out->f_back = l->f_back;
	out->f_code = l->f_code;
	out->f_lasti = l->f_lasti;
	out->f_entry = l->f_entry;
	out->f_read = read_end(read_end(read_end(read_end(0, l->f_back, 8), l->f_code, 8),
					l->f_lasti, l->lasti_kind == BP_PY_LASTI_PTR ? 8 : 4),
			       l->f_entry, 1);
	out->co_firstlineno = l->co_firstlineno;
	out->co_filename = l->co_filename;
	out->co_name = l->co_name;
	out->co_linetable = l->co_linetable;
	out->co_code = l->lasti_kind == BP_PY_LASTI_PTR ? l->code_basicsize : 0;
	out->str_state = l->str_state;
	out->str_ascii = l->str_ascii;
	out->str_compact = l->str_compact;
}
