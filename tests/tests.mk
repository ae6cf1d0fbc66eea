# SPDX-License-Identifier: GPL-2.0
#
# Included from the top-level Makefile.
#   unit tests:        tests/unit/test_*.c, cmocka, agent built with ASan+UBSan
#   fixtures:          tests/fixtures/*.c, small programs with known behaviour
#   integration tests: tests/integration/test_*.c, cmocka, drive ./boundprof as root
#   make test T=NAME   one test binary or one case (HACKING.md)

SAN_FLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -fno-omit-frame-pointer
SAN_CFLAGS	:= $(CPPFLAGS) -g -O1 $(SAN_FLAGS) -std=gnu11 $(WARNINGS) -D_GNU_SOURCE -MMD -MP \
		   -I$(OUT) -Ibpf -Iagent -Itests $(LIB_CFLAGS)
SAN_OBJS	:= $(patsubst %.c,$(OUT)/san/%.o,$(AGENT_SRCS)) $(OUT)/san/flame_assets.o
LIBAGENT_SAN	:= $(OUT)/san/libagent.a
TEST_LDLIBS	:= $(call pc_libs,cmocka,-lcmocka) $(ALL_LDLIBS)
TEST_FILTER	:= $(OUT)/san/tests/filter.o
# every test binary: BP_TEST_CASE picks one case, each case is timed, and a
# failing one prints the machine it failed on (tests/filter.c)
TEST_WRAPS	:= _cmocka_run_group_tests _assert_true _assert_int_equal _assert_int_not_equal \
		   _assert_string_equal _assert_string_not_equal _assert_memory_equal _fail _skip
TEST_LDFLAGS	:= $(LDFLAGS) $(foreach w,$(TEST_WRAPS),-Wl,--wrap=$(w))

UNIT_SRCS	:= $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS	:= $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(UNIT_SRCS))
# shared by the unit tests (profile builders): every other tests/unit/*.c
UNIT_LIB_SRCS	:= $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c))
UNIT_LIB_OBJS	:= $(patsubst %.c,$(OUT)/san/%.o,$(UNIT_LIB_SRCS))
INTEG_SRCS	:= $(sort $(wildcard tests/integration/test_*.c))
INTEG_BINS	:= $(patsubst tests/integration/%.c,$(OUT)/tests/integration/%,$(INTEG_SRCS))
INTEG_LIB_SRCS	:= $(filter-out $(INTEG_SRCS),$(wildcard tests/integration/*.c))
INTEG_LIB_OBJS	:= $(patsubst %.c,$(OUT)/san/%.o,$(INTEG_LIB_SRCS))
FIXTURE_SRCS	:= $(sort $(wildcard tests/fixtures/*.c))
FIXTURES	:= $(patsubst tests/fixtures/%.c,$(OUT)/tests/fixtures/%,$(FIXTURE_SRCS))

# extra files unit tests need (test binaries for the symbolizer, ...);
# fragments under tests/unit/ append to it
UNIT_DATA	:=

$(OUT)/san/%.o: %.c | $(SKEL) $(DEPS_STAMP)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -c $< -o $@

$(OUT)/san/flame_assets.o: $(OUT)/agent/export/flame_assets.c | $(SKEL)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -c $< -o $@

$(LIBAGENT_SAN): $(SAN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/tests/unit/%: tests/unit/%.c $(UNIT_LIB_OBJS) $(TEST_FILTER) $(LIBAGENT_SAN) | $(DEPS_STAMP)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) $(TEST_LDFLAGS) -o $@ $< $(UNIT_LIB_OBJS) $(TEST_FILTER) \
		$(LIBAGENT_SAN) $(TEST_LDLIBS) -lm

$(OUT)/tests/integration/%: tests/integration/%.c $(INTEG_LIB_OBJS) $(TEST_FILTER) $(LIBAGENT_SAN) \
			    | $(DEPS_STAMP)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) $(TEST_LDFLAGS) -Itests/integration -o $@ $< $(INTEG_LIB_OBJS) \
		$(TEST_FILTER) $(LIBAGENT_SAN) $(TEST_LDLIBS)

# Fixtures keep frame pointers so that their user stacks are whole; -O1 keeps
# the work loops real while leaving the named functions in place.
FIXTURE_CFLAGS	:= -g -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		   -fno-inline -Wall -Wextra -D_GNU_SOURCE
$(OUT)/tests/fixtures/%: tests/fixtures/%.c tests/fixtures/fixture.h | $(DEPS_STAMP)
	$(call msg,CC-FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -o $@ $< -lpthread -lm

# ... except the one that stands for distribution builds: -O2, no frame pointers
$(OUT)/tests/fixtures/nofp: FIXTURE_CFLAGS := -g -O2 -fomit-frame-pointer -Wall -Wextra \
					      -D_GNU_SOURCE

# Rust fixtures: release builds as users make them (no frame pointers), with
# debug info for lines. rustc from PATH, else rustup's default place; without
# one they are not built and the tests that need them skip, saying so.
RUSTC		?= $(or $(shell command -v rustc 2>/dev/null),$(wildcard $(HOME)/.cargo/bin/rustc),$(wildcard /root/.cargo/bin/rustc))
RUST_FIXTURES	:= $(patsubst tests/fixtures/%.rs,$(OUT)/tests/fixtures/%,$(sort $(wildcard tests/fixtures/*.rs)))
ifneq ($(RUSTC),)
FIXTURES	+= $(RUST_FIXTURES)
$(RUST_FIXTURES): $(OUT)/tests/fixtures/%: tests/fixtures/%.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(RUSTC) -O -g -o $@ $<
else
$(info   SKIP     Rust fixtures: no rustc on PATH or in ~/.cargo/bin)
endif

-include $(sort $(wildcard tests/unit/*.mk))

# how each kind of test binary runs
UNIT_ENV	:= BP_TEST_DATA=$(OUT)/tests/data BP_SRC=$(CURDIR) \
		   ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# the machine's memory bandwidth is measured into the build tree, not /var/lib
INTEG_ENV	:= BP_BIN=$(CURDIR)/boundprof BP_FIXTURES=$(OUT)/tests/fixtures \
		   BP_SRC=$(CURDIR) BOUNDPROF_STATE_DIR=$(OUT)/tests/state ASAN_OPTIONS=detect_leaks=0 \
		   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

test-unit: $(UNIT_BINS) $(UNIT_DATA) boundprof
	$(Q)fail=0; sh tests/lint/layers.sh || fail=1; \
	sh tests/lint/options.sh $(CURDIR)/boundprof || fail=1; \
	env $(UNIT_ENV) sh tests/unit/run.sh $(NPROC) $(UNIT_BINS) || fail=1; exit $$fail

# What the integration tests run besides boundprof: real programs for the
# verdicts (stress-ng, fio), Go's pprof, Chromium for the flame graphs,
# Prometheus for the agent, perf as the unwinder's peer and Debian's
# python3.11 and sqlite3 as programs without frame pointers (xz packs the
# unit tests' MiniDebugInfo), Debian's ruby (with perl and node) for the
# verdict on an interpreter boundprof does not walk; curl, a short-lived
# network client run once per input by a shell loop; Debian's R (r-base-core)
# for the R walk and its peer Rprof; and playwright-core
# from npm to drive Chromium.
# Node.js and npm often come from elsewhere (nodesource): then they are
# there, and never asked of apt-get (scripts/need.sh).
TEST_NEEDS := stress-ng=stress-ng fio=fio go=golang-go chromium=chromium \
	      prometheus=prometheus promtool=prometheus node=nodejs npm=npm \
	      perf=linux-perf sqlite3=sqlite3 /usr/bin/python3.11=python3.11 xz=xz-utils \
	      ruby=ruby curl=curl eu-stack=elfutils Rscript=r-base-core \
	      '/usr/lib/postgresql/15/bin/postgres|/usr/lib/postgresql/16/bin/postgres|/usr/lib/postgresql/17/bin/postgres'=postgresql

test-deps: | $(DEPS_STAMP)
	$(Q)$(NEED) -l $(OUT)/apt-test.log $(TEST_NEEDS)
	$(Q)if [ ! -d tests/browser/node_modules/playwright-core ]; then \
		echo "  DEPS     npm ci (tests/browser: playwright-core)"; \
		cd tests/browser && npm ci --no-audit --no-fund --loglevel=error \
			>$(OUT)/npm-test.log 2>&1 || { tail -20 $(OUT)/npm-test.log >&2; exit 1; }; \
	fi

test-integration: boundprof test-deps $(INTEG_BINS) $(FIXTURES)
	$(Q)fail=0; for t in $(INTEG_BINS); do \
		echo "  INTEG    $$(basename $$t)"; t0=$$(date +%s); \
		$(INTEG_ENV) $$t || fail=1; \
		echo "  INTEG    $$(basename $$t): $$(( $$(date +%s) - t0 )) s"; \
	done; exit $$fail

# Debian 12's stock 6.1 kernel under qemu, with boundprof inside
# (tests/kernels/run.sh, docs/kernels.md); the kernel is kept in $(OUT)/kernels
test-kernels: boundprof $(OUT)/tests/fixtures/split $(OUT)/tests/fixtures/spin
	$(Q)sh tests/kernels/run.sh $(OUT) $(CURDIR)/boundprof $(OUT)/tests/fixtures

# test-deps as on a fresh machine: a clean clone, the test tools hidden, a
# stand-in apt-get that only simulates (tests/fresh.sh). FULL=1: make test.
test-fresh:
	$(Q)sh tests/fresh.sh $(if $(filter 1,$(FULL)),--full)

# Everything the stages run, built first with every CPU: the stages
# themselves run one test at a time, as they must (they time things).
# (tests/fuzz/fuzz.mk adds its harnesses)
TEST_BUILD	:= boundprof $(UNIT_BINS) $(UNIT_DATA) $(INTEG_BINS) $(FIXTURES) \
		   $(OUT)/tests/fixtures/split $(OUT)/tests/fixtures/spin
NPROC		:= $(shell nproc 2>/dev/null || echo 1)
# one row per case (tests/filter.c) and per stage, read by tests/summary.sh
TEST_RESULTS	:= $(OUT)/tests/results.tsv
TEST_STAGES	:= $(OUT)/tests/stages.tsv
UNIT_ENV	+= BP_TEST_RESULTS=$(TEST_RESULTS)
INTEG_ENV	+= BP_TEST_RESULTS=$(TEST_RESULTS)

.PHONY: test-build
test-build: $(TEST_BUILD)

ifeq ($(T),)
# A failing stage does not stop the others: one summary of every failure at
# the end, and a non-zero exit. The test tools are installed first, so that
# no unit test finds one missing.
TEST_STAGE_LIST	:= test-unit fuzz-smoke test-integration test-kernels
test:
	$(Q)mkdir -p $(OUT)/tests && : >$(TEST_RESULTS) && : >$(TEST_STAGES)
	$(Q)t0=$$(date +%s); failed=; \
	stage() { ts=$$(date +%s); $(MAKE) --no-print-directory "$$@" || failed="$$failed $$1"; \
		printf '%s\t%s\n' "$$1" $$(( $$(date +%s) - ts )) >>$(TEST_STAGES); }; \
	stage test-deps; \
	stage test-build -j$(NPROC); \
	case "$$failed" in *test-build*) ;; *) for s in $(TEST_STAGE_LIST); do stage $$s; done ;; esac; \
	sh tests/summary.sh $(TEST_RESULTS) $(TEST_STAGES) $$(( $$(date +%s) - t0 )) "$$failed"
else
# T=NAME: a test binary (test_merge, merge, unit/test_flame: a name in both
# tests/unit and tests/integration runs both), a case (the name of a test
# function: the binaries that register it), or BINARY:PATTERN (cases by
# cmocka's * and ? wildcards)
T_BIN		:= $(firstword $(subst :, ,$(T)))
T_CASE		:= $(word 2,$(subst :, ,$(T)))
T_BINS		:= $(filter $(OUT)/tests/%/$(T_BIN) $(OUT)/tests/%/test_$(T_BIN) \
		   $(OUT)/tests/$(T_BIN) $(OUT)/tests/$(dir $(T_BIN))test_$(notdir $(T_BIN)), \
		   $(UNIT_BINS) $(INTEG_BINS))
ifeq ($(T_BINS)$(T_CASE),)
T_CASE		:= $(T_BIN)
T_BINS		:= $(patsubst tests/%.c,$(OUT)/tests/%,$(shell grep -lE \
		   'cmocka_unit_test[a-z_]*\($(T_BIN)[,)]' $(UNIT_SRCS) $(INTEG_SRCS)))
endif
ifeq ($(T_BINS),)
$(error T=$(T): no test binary (tests/unit, tests/integration) or test case of that name)
endif
T_UNIT		:= $(filter $(UNIT_BINS),$(T_BINS))
T_INTEG		:= $(filter $(INTEG_BINS),$(T_BINS))

# (a binary with no case of that name exits 77: the others may have it)
test: $(T_BINS) $(if $(T_UNIT),$(UNIT_DATA)) $(if $(T_INTEG),boundprof test-deps $(FIXTURES))
	$(Q)fail=0; ran=0; for t in $(T_UNIT); do \
		echo "  UNIT     $$(basename $$t) $(T_CASE)"; \
		BP_TEST_CASE='$(T_CASE)' $(UNIT_ENV) $$t; rc=$$?; \
		[ $$rc = 77 ] || { ran=1; [ $$rc = 0 ] || fail=1; }; \
	done; for t in $(T_INTEG); do \
		echo "  INTEG    $$(basename $$t) $(T_CASE)"; \
		BP_TEST_CASE='$(T_CASE)' $(INTEG_ENV) $$t; rc=$$?; \
		[ $$rc = 77 ] || { ran=1; [ $$rc = 0 ] || fail=1; }; \
	done; [ $$ran = 1 ] || { echo "T=$(T): no test case of that name" >&2; fail=1; }; \
	exit $$fail
endif

-include $(wildcard $(OUT)/san/agent/*/*.d $(OUT)/san/tests/*.d $(OUT)/san/tests/*/*.d \
	  $(OUT)/tests/*/*.d)
