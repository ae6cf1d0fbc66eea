# SPDX-License-Identifier: GPL-2.0
#
# Included from the top-level Makefile. Benchmarks print ratios against a peer
# measured in the same run; nothing here asserts on time.

BENCH_BINS := $(OUT)/bench/cpujob $(OUT)/bench/runstat $(OUT)/bench/hrtcost
BENCH_NEEDS := perf=linux-perf bpftrace=bpftrace stress-ng=stress-ng fio=fio \
	       'offcputime|/usr/sbin/offcputime=libbpf-tools'

$(OUT)/bench/%: bench/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -D_GNU_SOURCE -o $@ $< -lpthread

# the sampling timer's cost, whichever tool samples (bench/hrtcost.c): a BPF
# object of its own, apart from boundprof's
$(OUT)/bench/hrtcost.bpf.o: bench/hrtcost.bpf.c bench/hrtcost.h | $(DEPS_STAMP)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/bench/hrtcost.skel.h: $(OUT)/bench/hrtcost.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name hrtcost_bpf > $@

$(OUT)/bench/hrtcost: bench/hrtcost.c bench/hrtcost.h $(OUT)/bench/hrtcost.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -Ibench -I$(OUT)/bench $(LIB_CFLAGS) -o $@ $< \
		$(call pc_libs,libbpf,-lbpf) $(call pc_libs,libelf,-lelf) $(call pc_libs,zlib,-lz)

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
