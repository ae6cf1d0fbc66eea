/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hardware counters where the CPU has a PMU: cycles, instructions and a
 * cache-miss event counted per profiled task (and its children), giving IPC,
 * misses per kilo-instruction and a DRAM traffic estimate for the CPU vs
 * memory decision. In a guest without a virtual PMU nothing opens and the
 * verdict uses software evidence instead (docs/classification.md).
 */
#ifndef BP_PMU_H
#define BP_PMU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bp_pmu_counts {
	uint64_t cycles;
	uint64_t instructions;
	uint64_t cache_misses;	/* the generic cache-misses event: LLC misses on Intel, L2 on AMD */
	uint64_t enabled_ns;	/* time the group was enabled / actually counting */
	uint64_t running_ns;
	bool valid;
	bool scaled;		/* some event was multiplexed and its count scaled up */
	bool misses_unknown;	/* the cache-misses event could not be opened */
};

struct bp_pmu_metrics {
	double ipc;		/* instructions per cycle */
	double mpki;		/* cache misses per 1000 instructions */
	double dram_gbs;	/* 64 B x misses / second of counting: a lower bound of DRAM traffic */
	double running_frac;	/* running_ns / enabled_ns: < 1 when the PMU was multiplexed */
	bool scaled;		/* values were scaled up for multiplexing */
	bool misses_unknown;	/* mpki and dram_gbs are 0 because misses were not counted */
};

struct bp_pmu;

/* whether a hardware cycles counter can be opened here */
bool bp_pmu_available(void);

/* NULL and errno set (-ENOENT/-EOPNOTSUPP: no PMU) */
struct bp_pmu *bp_pmu__new(void);
void bp_pmu__free(struct bp_pmu *m);

/*
 * Count a process: every thread it has now, and (inherit) every thread and
 * child process created after this call, summed into one set per pid added.
 * Call for a COMMAND's child before it execs to cover its whole tree.
 * 0 or -errno.
 */
int bp_pmu__add(struct bp_pmu *m, pid_t pid);

/* the counts so far for a pid added with bp_pmu__add(); 0 or -errno */
int bp_pmu__read(struct bp_pmu *m, pid_t pid, struct bp_pmu_counts *out);

/* derive the metrics; seconds is the counting window (for dram_gbs) */
void bp_pmu_metrics(const struct bp_pmu_counts *c, double seconds, struct bp_pmu_metrics *out);

/*
 * The same counting over other events: cycles, instructions and cache-misses
 * replaced by config[0..2] of the given perf type. It lets the tests run the
 * whole machinery (threads, inheritance, reads) with software events in a
 * guest without a PMU. NULL and errno set when config[0] cannot be opened.
 */
struct bp_pmu *bp_pmu__new_events(uint32_t type, const uint64_t config[3]);

/* value * enabled / running, without overflow (saturates); 0 when running is 0 */
uint64_t bp_pmu_scale(uint64_t value, uint64_t enabled, uint64_t running);

#endif /* BP_PMU_H */
