/* TEMPORARY timing probe: not to be committed */
#pragma once
#include <time.h>
#include <stdint.h>
#include <stdio.h>
enum { TP_EV0 = 0, TP_TICK = 8, TP_DRAIN, TP_CLOSE, TP_HTTP, TP_LOCAL, TP_LOOP, TP_N = 26 };
extern uint64_t tp_ns[TP_N], tp_cnt[TP_N];
static inline uint64_t tp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
static inline void tp_add(int i, uint64_t t0) { tp_ns[i] += tp_now() - t0; tp_cnt[i]++; }
static inline void tp_dump(void)
{
	static const char *n[TP_N] = {"ev?", "exec", "first", "exit", "fork", "miss", "ev6", "ev7",
		"tick-rest", "slice", "close", "http", "local", "loop", "", "", "hold", "gone-rest", "python", "rlang", "meta", "snap", "poll", "ksym+uwref", "py+r+mem"};
	for (int i = 0; i < TP_N; i++)
		if (tp_cnt[i]) fprintf(stderr, "TP %-10s %8lu calls %10.3f ms %8.1f us/call\n", n[i],
			tp_cnt[i], tp_ns[i] / 1e6, tp_ns[i] / 1e3 / tp_cnt[i]);
}
