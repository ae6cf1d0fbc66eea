// SPDX-License-Identifier: GPL-2.0
/*
 * Built once per CPython installed, against that interpreter's headers
 * (tests/unit/pylayout.mk): checks its minor version's row of
 * agent/symbolize/python_layout.c, and for 3.13+ where the walk's values
 * sit in _Py_DebugOffsets, field by field. Prints each mismatch; exit
 * status 1 on any.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x03080000
#include <internal/pycore_pystate.h>
#elif PY_VERSION_HEX >= 0x03070000
#include <internal/pystate.h>
#endif
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#endif
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#include <internal/pycore_code.h>
#endif
#if PY_VERSION_HEX >= 0x03080000
#include <internal/pycore_gil.h>
#elif PY_VERSION_HEX >= 0x03070000
#include <internal/gil.h>
#endif

#include "symbolize/python_layout.h"

static int bad;

static void check(const char *what, long have, long want)
{
	if (have == want)
		return;
	printf("python %s: %s is %ld in the table, %ld in the headers\n", PY_VERSION, what, have,
	       want);
	bad = 1;
}

#define CHECK(field, expr) check(#field, (long)l->field, (long)(expr))

int main(void)
{
	const struct bp_py_layout *l = bp_py_layout(PY_MINOR_VERSION);

	if (PY_MAJOR_VERSION != 3 || !l) {
		printf("python %s: no row in the table\n", PY_VERSION);
		return 1;
	}
	check("PyObject.ob_type (a Py_TRACE_REFS build?)", 8, offsetof(PyObject, ob_type));
#if PY_VERSION_HEX < 0x030b0000
	CHECK(ts_frame, offsetof(PyThreadState, frame));
	CHECK(cf_frame, BP_PY_NONE);
	CHECK(ts_tid, offsetof(PyThreadState, thread_id));
	CHECK(tid_kind, BP_PY_TID_PTHREAD);
	CHECK(f_back, offsetof(PyFrameObject, f_back));
	CHECK(f_code, offsetof(PyFrameObject, f_code));
	CHECK(f_lasti, offsetof(PyFrameObject, f_lasti));
	CHECK(f_entry, BP_PY_NONE);
	CHECK(entry_kind, BP_PY_ENTRY_EACH);
	CHECK(lasti_kind, PY_VERSION_HEX >= 0x030a0000 ? BP_PY_LASTI_UNITS : BP_PY_LASTI_BYTES);
	CHECK(code_basicsize, sizeof(PyCodeObject));
#else
#if PY_VERSION_HEX < 0x030d0000
	CHECK(ts_frame, offsetof(PyThreadState, cframe));
	CHECK(cf_frame, offsetof(_PyCFrame, current_frame));
	CHECK(f_code, offsetof(_PyInterpreterFrame, f_code));
	CHECK(f_lasti, offsetof(_PyInterpreterFrame, prev_instr));
#else
	CHECK(ts_frame, offsetof(PyThreadState, current_frame));
	CHECK(cf_frame, BP_PY_NONE);
	CHECK(f_code, offsetof(_PyInterpreterFrame, f_executable));
	CHECK(f_lasti, offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	CHECK(ts_tid, offsetof(PyThreadState, native_thread_id));
	CHECK(tid_kind, BP_PY_TID_NATIVE);
	CHECK(f_back, offsetof(_PyInterpreterFrame, previous));
	CHECK(lasti_kind, BP_PY_LASTI_PTR);
#if PY_VERSION_HEX < 0x030c0000
	CHECK(f_entry, offsetof(_PyInterpreterFrame, is_entry));
	CHECK(entry_kind, BP_PY_ENTRY_FLAG);
#else
	CHECK(f_entry, offsetof(_PyInterpreterFrame, owner));
	CHECK(entry_kind, BP_PY_ENTRY_SHIM);
	check("FRAME_OWNED_BY_CSTACK", 3, FRAME_OWNED_BY_CSTACK);
#endif
	CHECK(code_basicsize, offsetof(PyCodeObject, co_code_adaptive));
#endif
	CHECK(co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	CHECK(co_filename, offsetof(PyCodeObject, co_filename));
#if PY_VERSION_HEX >= 0x030b0000
	CHECK(co_name, offsetof(PyCodeObject, co_qualname));
#else
	CHECK(co_name, offsetof(PyCodeObject, co_name));
#endif
#if PY_VERSION_HEX >= 0x030a0000
	CHECK(co_linetable, offsetof(PyCodeObject, co_linetable));
#else
	CHECK(co_linetable, offsetof(PyCodeObject, co_lnotab));
#endif
	CHECK(str_state, offsetof(PyASCIIObject, state));
	CHECK(str_ascii, sizeof(PyASCIIObject));
	CHECK(str_compact, sizeof(PyCompactUnicodeObject));
	/* what bpf/python.h takes as the same everywhere */
	check("PyASCIIObject.length", BP_PY_STR_LEN, offsetof(PyASCIIObject, length));
	check("PyASCIIObject.state", BP_PY_STR_STATE, offsetof(PyASCIIObject, state));
	check("PyVarObject.ob_size", 16, offsetof(PyVarObject, ob_size));
	check("PyBytesObject.ob_sval", 32, offsetof(PyBytesObject, ob_sval));
	{
		/* the state's bits: kind 1 at bit 2, compact at bit 5, ascii at bit 6 */
		PyASCIIObject o;
		unsigned int st;

		memset(&o, 0, sizeof(o));
		o.state.kind = 1;
		o.state.compact = 1;
		o.state.ascii = 1;
		memcpy(&st, (char *)&o + offsetof(PyASCIIObject, state), sizeof(st));
		check("str state bits", BP_PY_STATE_COMPACT | BP_PY_STATE_ASCII |
					    1 << BP_PY_STATE_KIND_SHIFT, st);
	}
#if PY_VERSION_HEX >= 0x03070000
	check("Py_tss_t._key", 4, offsetof(Py_tss_t, _key));
	CHECK(gil_size, sizeof(struct _gil_runtime_state));
#endif
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x030c0000
	CHECK(rt_key, offsetof(_PyRuntimeState, gilstate.autoTSSkey));
	CHECK(rt_gil, offsetof(_PyRuntimeState, ceval.gil));
	CHECK(rt_main_interp, -1);
#elif PY_VERSION_HEX >= 0x030c0000
	CHECK(rt_key, offsetof(_PyRuntimeState, autoTSSkey));
	CHECK(rt_gil, -1);
	CHECK(rt_main_interp, offsetof(_PyRuntimeState, interpreters.main));
	CHECK(interp_gil, offsetof(PyInterpreterState, ceval.gil));
#endif
#if PY_VERSION_HEX >= 0x030d0000
	CHECK(debug_offsets, 1);
	check("_PyRuntimeState.debug_offsets", 0, offsetof(_PyRuntimeState, debug_offsets));
	check("sizeof(_Py_DebugOffsets)", BP_PY_DBG_SIZE, sizeof(_Py_DebugOffsets));
#define DBG(name, field) check(#name, name, offsetof(_Py_DebugOffsets, field))
	DBG(BP_PY_DBG_VERSION, version);
	DBG(BP_PY_DBG_FREE_THREADED, free_threaded);
	DBG(BP_PY_DBG_TS_CURRENT_FRAME, thread_state.current_frame);
	DBG(BP_PY_DBG_TS_NATIVE_TID, thread_state.native_thread_id);
	DBG(BP_PY_DBG_IF_PREVIOUS, interpreter_frame.previous);
	DBG(BP_PY_DBG_IF_EXECUTABLE, interpreter_frame.executable);
	DBG(BP_PY_DBG_IF_INSTR_PTR, interpreter_frame.instr_ptr);
	DBG(BP_PY_DBG_IF_OWNER, interpreter_frame.owner);
	DBG(BP_PY_DBG_CO_FILENAME, code_object.filename);
	DBG(BP_PY_DBG_CO_QUALNAME, code_object.qualname);
	DBG(BP_PY_DBG_CO_LINETABLE, code_object.linetable);
	DBG(BP_PY_DBG_CO_FIRSTLINENO, code_object.firstlineno);
	DBG(BP_PY_DBG_CO_CODE_ADAPTIVE, code_object.co_code_adaptive);
	DBG(BP_PY_DBG_STR_STATE, unicode_object.state);
	DBG(BP_PY_DBG_STR_ASCII_SIZE, unicode_object.asciiobject_size);
#else
	CHECK(debug_offsets, 0);
#endif
	if (!bad)
		printf("python %s: the table's row of 3.%d matches its headers\n", PY_VERSION,
		       PY_MINOR_VERSION);
	return bad;
}
