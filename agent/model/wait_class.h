/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait classes (bpf/wait_classes.h) as data: enum bp_kind, each class's
 * names, frame, phrases and colours, the bridge from the BPF side's thread
 * states, and the one definition of busy time. Nothing here is written by
 * hand per class: a class is a row of the table.
 */
#ifndef BP_MODEL_WAIT_CLASS_H
#define BP_MODEL_WAIT_CLASS_H

#include <stdbool.h>
#include <stdint.h>

#include "boundprof.h"

/* the classes of samples, in the table's (report) order; BP_KIND_ONCPU is running */
#define BP__KIND_ENUM(kind, ...)	BP_KIND_##kind,
enum bp_kind {
	BP_WAIT_CLASSES(BP__KIND_ENUM)
	BP_KIND__MAX,
};

/* what a class's time counts as in busy time (the BUSY column) */
enum bp_busy {
	BP_BUSY_NO,		/* waiting for work */
	BP_BUSY_YES,
	BP_BUSY_CLIENT,		/* only a client's waits; a server waiting for requests is idle */
	BP_BUSY_PEER,		/* another process's work: not in a verdict's shares */
};

struct bp_wait_class {
	uint32_t tstate;	/* enum bp_tstate: the ABI value */
	uint32_t rank;		/* in the timeline's order of productivity, 0 best */
	enum bp_busy busy;
	const char *name;	/* "io": JSON keys, pprof "wait" label, /metrics class */
	const char *state;	/* its timeline name ("running" for on-CPU) */
	const char *label;	/* its row in `boundprof diff` */
	const char *frame;	/* "[io]": folded and flame graph class frame */
	const char *text;	/* the flame graph's legend */
	const char *threads;	/* "waiting on block IO": sums over threads */
	const char *wall;	/* ... a process's wall time in the text report */
	const char *verdict;	/* ... a verdict's timeline evidence */
	uint16_t user[4];	/* flame colours: hue, hue spread, saturation, lightness */
	uint16_t kernel[4];
};

/* every class, by enum bp_kind */
extern const struct bp_wait_class bp_wait_classes[BP_KIND__MAX];

/* the class of kind k; a kind past the table is "other" */
static inline const struct bp_wait_class *bp_wclass(uint32_t k)
{
	return &bp_wait_classes[k < BP_KIND__MAX ? k : BP_KIND_OTHER];
}

/* the kind of thread state s (enum bp_tstate); a state past the table is other */
enum bp_kind bp_kind_of_state(uint32_t s);

/* the class of thread state s (enum bp_tstate) */
static inline const struct bp_wait_class *bp_wclass_of_state(uint32_t s)
{
	return &bp_wait_classes[bp_kind_of_state(s)];
}

/* "oncpu", "runqueue", ...; "unknown" past the table */
const char *bp_kind_name(enum bp_kind k);

/* the kind named name (bp_kind_name), or -ENOENT */
int bp_kind_find(const char *name);

/*
 * Busy time: on_s on-CPU plus the waits of off_s[] (seconds by enum
 * bp_kind) the table counts as busy, with net_work_s for a client's
 * network waits; peers: also the waits on another process's work (pipes),
 * as activity does, but a verdict's shares do not.
 */
double bp_busy_s(double on_s, const double *off_s, double net_work_s, bool peers);

#endif /* BP_MODEL_WAIT_CLASS_H */
