/* SPDX-License-Identifier: GPL-2.0 */
/*
 * This machine's own memory bandwidth, the yardstick of the memory traffic
 * a process makes (docs/classification.md): a short STREAM triad on our
 * own threads, over arrays far beyond the last-level cache, once per CPU
 * model, kept in a state file with its date.
 */
#ifndef BP_MEMBW_H
#define BP_MEMBW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bp_membw {
	double gbs_1;		/* one thread streaming, GB/s (STREAM counting: 24 bytes/element) */
	double gbs_n;		/* threads threads streaming */
	uint32_t threads;
	uint64_t bytes;		/* the three arrays together */
	/*
	 * The largest set (three arrays) the threads streamed at least 1.5x
	 * faster than from memory, at most the reported last-level cache: the
	 * cache a process here can use. 0 unknown.
	 */
	uint64_t cache_bytes;
	int64_t when;		/* measured at, Unix seconds */
	char cpu[128];		/* the CPU model it was measured on */
	/*
	 * What memprobe's traffic window sees of a stream here (probecal.h),
	 * once per boot: a hypervisor decides it, and a guest can come back
	 * on another host. probe_boot empty: not calibrated; probe_err
	 * non-zero: the window could not be opened (-errno).
	 */
	char probe_boot[40];
	int probe_err;
	double probe_stream_gbs, probe_seen_gbs, probe_visible;
	bool probe_floor;
};

/* the state directory: $BOUNDPROF_STATE_DIR, else /var/lib/boundprof */
const char *bp_state_dir(void);

/*
 * The CPU model: "model name" of <proc_root>/cpuinfo (NULL: /proc), else
 * CPUID's brand string, else "unknown". Returns buf.
 */
const char *bp_cpu_model(const char *proc_root, char *buf, size_t len);

/*
 * Stream a triad over arrays of 4x llc_bytes in all (at least 256 MiB, at
 * most 1 GiB and a quarter of the available memory) for about seconds on
 * one thread, then as long on threads threads; then the cache they stream
 * from, with sets of 6 MiB doubling up to llc_bytes. 0 or -errno
 * (-ENOMEM).
 */
int bp_membw_measure(uint64_t llc_bytes, uint32_t threads, double seconds, struct bp_membw *out);

/* the state file's text, and reading it back: 0 or -EINVAL */
int bp_membw_format(const struct bp_membw *m, char *buf, size_t len);
int bp_membw_parse(const char *text, size_t len, struct bp_membw *out);

/*
 * This machine's bandwidth: from <state_dir>/membw.json when it was
 * measured on this CPU model, else measured now (threads: the online CPUs,
 * at most 16) and saved there; the traffic window is calibrated again on
 * each boot (~0.3 s). *measured says which. 0 or -errno; a state
 * directory we cannot write is not an error (the figure is then measured
 * again next time).
 */
int bp_membw_get(const char *state_dir, uint64_t llc_bytes, uint32_t threads,
		 struct bp_membw *out, bool *measured);

/* "measured 2026-12-01 on AMD EPYC 9R45, 2 threads, 3 x 341 MiB" */
const char *bp_membw_source(const struct bp_membw *m, char *buf, size_t len);

#endif /* BP_MEMBW_H */
