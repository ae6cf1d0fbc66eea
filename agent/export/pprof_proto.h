/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the pprof writer (pprof_write.c), reader (pprof_read.c) and the
 * boundprof state they carry (pprof_state.c) share: profile.proto's field
 * numbers, the state's framing, and the state's interface. Private to
 * export/pprof_*.c; the library's interface is export/pprof.h.
 */
#ifndef BP_PPROF_PROTO_H
#define BP_PPROF_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"
#include "util/json.h"
#include "model/profile.h"

#define STATE_PREFIX	"boundprof-state v1 "
/* how kernel frames are told apart in Function.system_name */
#define KERNEL_MARK	"_[k]"
/* marks after a named frame's system_name: a Python function, an inlined call */
#define PYTHON_MARK	"_[py]"
#define INLINE_MARK	"_[inl]"

/* profile.proto field numbers */
enum {
	PROF_SAMPLE_TYPE = 1,
	PROF_SAMPLE = 2,
	PROF_MAPPING = 3,
	PROF_LOCATION = 4,
	PROF_FUNCTION = 5,
	PROF_STRING_TABLE = 6,
	PROF_TIME_NANOS = 9,
	PROF_DURATION_NANOS = 10,
	PROF_PERIOD_TYPE = 11,
	PROF_PERIOD = 12,
	PROF_COMMENT = 13,
	/*
	 * boundprof's own state, in a field number profile.proto does not use:
	 * every protobuf reader skips it, where a comment would be printed in
	 * the header of `go tool pprof -top` (kilobytes of JSON).
	 */
	PROF_BOUNDPROF_STATE = 1000,
	PROF_DEFAULT_SAMPLE_TYPE = 14,
};

enum { VT_TYPE = 1, VT_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
};
enum { LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_ADDRESS = 3, LOC_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNC_ID = 1, FUNC_NAME = 2, FUNC_SYSTEM_NAME = 3, FUNC_FILENAME = 4 };

static inline const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ------------------------------------------------------------------ write */

/* one Mapping per distinct (module, path, build-id); the strings are interned */
struct bp_pprof_map {
	const char *module;
	const char *path;
	const char *build_id;
};

/*
 * The state document (STATE_PREFIX, then JSON) of p into out; maps are the
 * Mappings as written, id = index + 1. 0 or -errno.
 */
int bp_pprof_state_write(const struct bp_profile *p, const struct bp_pprof_map *maps,
			 uint32_t nr_maps, struct bp_buf *out);

/* ------------------------------------------------------------------- read */

/* where a read failure is told, in one line: the first message stays */
struct bp_pprof_err {
	char *msg;
	size_t len;	/* 0: no message wanted */
};

/* -EINVAL, and the message unless one was given already */
int bp_pprof_fail(struct bp_pprof_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* -E2BIG (past a bound of pprof.h), and the message unless one was given already */
int bp_pprof_toobig(struct bp_pprof_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* -ENOMEM, and "out of memory" unless a message was given already */
int bp_pprof_nomem(struct bp_pprof_err *e);

/* a module that is not the base name of its mapping's file (the state says) */
struct bp_pprof_module {
	uint64_t mapping;
	char *module;
	size_t order;	/* in the document */
};

/* boundprof's state, as read; all zero: the profile has none */
struct bp_pprof_state {
	struct bp_json *json;
	struct bp_pprof_module *modules;
	size_t nr_modules;
};

/*
 * Parse the state's JSON (the text after STATE_PREFIX) and what is needed
 * before the frames are read (modules). 0, -EINVAL or -ENOMEM (e says why).
 */
int bp_pprof_state_parse(struct bp_pprof_state *s, const char *text, size_t len,
			 struct bp_pprof_err *e);
/* the module the state names for this mapping id, or NULL */
const char *bp_pprof_state_module(const struct bp_pprof_state *s, uint64_t mapping);
/* the stacks the state lists, created in p in their order (before the samples) */
int bp_pprof_state_stacks(const struct bp_pprof_state *s, struct bp_profile *p,
			  struct bp_pprof_err *e);
/* everything else of the state into p (after the samples) */
int bp_pprof_state_apply(const struct bp_pprof_state *s, struct bp_profile *p,
			 struct bp_pprof_err *e);
void bp_pprof_state_free(struct bp_pprof_state *s);

#endif /* BP_PPROF_PROTO_H */
