# SPDX-License-Identifier: GPL-2.0
#
# Included from the top-level Makefile. Benchmarks print ratios against a peer
# measured in the same run; nothing here asserts on time.

BENCH_BINS := $(OUT)/bench/cpujob $(OUT)/bench/runstat
BENCH_NEEDS := perf=linux-perf bpftrace=bpftrace stress-ng=stress-ng fio=fio \
	       'offcputime|/usr/sbin/offcputime=libbpf-tools'

$(OUT)/bench/%: bench/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -D_GNU_SOURCE -o $@ $< -lpthread

bench-deps: | $(DEPS_STAMP)
	$(Q)$(NEED) -l $(OUT)/apt-bench.log $(BENCH_NEEDS)

# what boundprof keeps between runs (the memory bandwidth measured once)
# goes into the build tree, as the tests' does: a bench leaves nothing in
# /var/lib on the machine it ran on
BENCH_ENV := BP=./boundprof BOUNDPROF_STATE_DIR=$(abspath $(OUT))/bench/state

bench: boundprof $(BENCH_BINS) bench-deps
	$(Q)$(BENCH_ENV) bench/oncpu.sh $(OUT)
	$(Q)$(BENCH_ENV) bench/offcpu.sh
	$(Q)$(MAKE) --no-print-directory $(OUT)/tests/fixtures/odirect && \
		$(BENCH_ENV) bench/io.sh $(OUT)
	$(Q)$(MAKE) --no-print-directory $(OUT)/tests/fixtures/churn $(OUT)/tests/fixtures/shortlived && \
		$(BENCH_ENV) bench/agent.sh $(OUT)

.PHONY: bench-deps
