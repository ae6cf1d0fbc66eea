# SPDX-License-Identifier: GPL-2.0
#
# Included from the top-level Makefile. Benchmarks print ratios against a peer
# measured in the same run; nothing here asserts on time.

BENCH_BINS := $(OUT)/bench/cpujob $(OUT)/bench/runstat
BENCH_PKGS := linux-perf bpftrace stress-ng fio curl

$(OUT)/bench/%: bench/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -D_GNU_SOURCE -o $@ $< -lpthread

bench-deps:
	$(Q)( for t in perf bpftrace stress-ng fio curl; do command -v $$t >/dev/null || exit 1; done ) || { \
		echo "  DEPS     apt-get install $(BENCH_PKGS)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BENCH_PKGS) >$(OUT)/apt-bench.log 2>&1 || \
		{ apt-get update -q >>$(OUT)/apt-bench.log 2>&1 && \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BENCH_PKGS) >>$(OUT)/apt-bench.log 2>&1; }; }

bench: boundprof $(BENCH_BINS) bench-deps
	$(Q)BP=./boundprof bench/oncpu.sh $(OUT)
	$(Q)BP=./boundprof bench/offcpu.sh
	$(Q)$(MAKE) --no-print-directory $(OUT)/tests/fixtures/odirect && BP=./boundprof bench/io.sh $(OUT)
	$(Q)$(MAKE) --no-print-directory $(OUT)/tests/fixtures/churn $(OUT)/tests/fixtures/shortlived && \
		BP=./boundprof bench/agent.sh $(OUT)

.PHONY: bench-deps
