# SPDX-License-Identifier: GPL-2.0
#
# libFuzzer harnesses (docs/fuzzing.md), included from the top-level Makefile.
#   make fuzz            run each harness FUZZ_SECONDS (default 60), one after another
#   make fuzz-smoke      each for FUZZ_SMOKE_SECONDS (3), two at a time, and replay
#                        the regression inputs: part of make test
#   make fuzz-HARNESS    one harness (fuzz-pprof, fuzz-httpd, ...)
# The library is built again with clang into $(OUT)/fuzz/obj
# (-fsanitize=fuzzer-no-link,address,undefined); crashes and the grown corpus
# go to $(OUT)/fuzz/work/HARNESS, never into the source tree.

FUZZ_CC		?= clang-14
FUZZ_SECONDS	?= 60
FUZZ_SMOKE_SECONDS ?= 3
FUZZ_HARNESSES	:= pprof elf httpd perfmap procmaps kallsyms json cgroup ipc
FUZZ_OUT	:= $(OUT)/fuzz
FUZZ_SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS	:= $(CPPFLAGS) -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) -std=gnu11 -Wall \
		   -Wextra -Wno-unused-parameter -D_GNU_SOURCE -MMD -MP -I$(OUT) -Ibpf -Iagent \
		   -Itests $(LIB_CFLAGS)
FUZZ_OBJS	:= $(patsubst %.c,$(FUZZ_OUT)/obj/%.o,$(AGENT_SRCS)) $(FUZZ_OUT)/obj/flame_assets.o
FUZZ_LIB	:= $(FUZZ_OUT)/libagent.a
FUZZ_BINS	:= $(addprefix $(FUZZ_OUT)/bin/fuzz_,$(FUZZ_HARNESSES))
FUZZ_DEPS	:= $(OUT)/.fuzz-deps-ok
FUZZ_SUMMARY	?= $(FUZZ_OUT)/summary.txt
# per harness libFuzzer options: requests up to the server's 8 KiB head and past it
FUZZ_OPTS_httpd	:= -max_len=12288 -dict=tests/fuzz/http.dict
FUZZ_OPTS_json	:= -dict=tests/fuzz/json.dict
# requests up to the line limit and past it
FUZZ_OPTS_ipc	:= -max_len=4096 -dict=tests/fuzz/ipc.dict

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-regress $(addprefix fuzz-,$(FUZZ_HARNESSES))

# clang 14 and its libFuzzer runtime, which Debian ships apart from clang
# (libclang-rt-14-dev): installed when missing, like every build tool
# (scripts/need.sh); the runtime's path is clang's to say
$(FUZZ_DEPS): | $(DEPS_STAMP)
	$(Q)$(NEED) -l $(OUT)/apt-fuzz.log $(FUZZ_CC)=clang-14
	$(Q)$(NEED) -l $(OUT)/apt-fuzz.log \
		"$$($(FUZZ_CC) -print-runtime-dir)/libclang_rt.fuzzer-$$(uname -m).a=libclang-rt-14-dev"
	$(Q)touch $@

$(FUZZ_OUT)/obj/%.o: %.c | $(SKEL) $(FUZZ_DEPS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_OUT)/obj/flame_assets.o: $(OUT)/agent/export/flame_assets.c | $(SKEL) $(FUZZ_DEPS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_OUT)/bin/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB) | $(FUZZ_DEPS)
	$(call msg,FUZZ-LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(ALL_LDLIBS)

fuzz-build: $(FUZZ_BINS)
# built with the tests, on every CPU (tests/tests.mk)
test-build: $(FUZZ_BINS)

# $(1): harness, $(2): seconds
define fuzz_run
	$(Q)sh tests/fuzz/run.sh $(FUZZ_OUT)/bin/fuzz_$(1) $(2) $(CURDIR)/tests/fuzz/corpus/$(1) \
		$(FUZZ_OUT)/work/$(1) $(FUZZ_SUMMARY) $(subst tests/,$(CURDIR)/tests/,$(FUZZ_OPTS_$(1)))
endef

$(addprefix fuzz-,$(FUZZ_HARNESSES)): fuzz-%: $(FUZZ_OUT)/bin/fuzz_%
	$(call fuzz_run,$*,$(FUZZ_SECONDS))

# one after another: the fuzzers share the machine with everything else
fuzz: $(FUZZ_BINS)
	$(Q)rm -f $(FUZZ_SUMMARY)
	$(Q)fail=0; for h in $(FUZZ_HARNESSES); do \
		$(MAKE) --no-print-directory fuzz-$$h FUZZ_SECONDS=$(FUZZ_SECONDS) \
			FUZZ_SUMMARY=$(FUZZ_SUMMARY) || fail=1; \
	done; echo "  FUZZ     summary in $(FUZZ_SUMMARY)"; exit $$fail

# every input that once crashed a harness, run once more
fuzz-regress: $(FUZZ_BINS)
	$(Q)fail=0; for h in $(FUZZ_HARNESSES); do \
		d=tests/fuzz/regress/$$h; [ -d $$d ] || continue; \
		n=$$(ls $$d | wc -l); [ $$n -gt 0 ] || continue; \
		echo "  FUZZ-RE  $$h: $$n input(s)"; \
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(FUZZ_OUT)/bin/fuzz_$$h -rss_limit_mb=512 -malloc_limit_mb=256 -timeout=10 \
			$$d/* >$(FUZZ_OUT)/regress-$$h.log 2>&1 || \
			{ tail -30 $(FUZZ_OUT)/regress-$$h.log >&2; fail=1; }; \
	done; exit $$fail

# two at a time: nothing else runs in this stage of make test (27 s -> 15 s of it)
fuzz-smoke: $(FUZZ_BINS)
	$(Q)$(MAKE) --no-print-directory fuzz-regress
	$(Q)rm -f $(FUZZ_OUT)/summary-smoke.txt
	$(Q)$(MAKE) --no-print-directory -k -j2 $(addprefix fuzz-,$(FUZZ_HARNESSES)) \
		FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) FUZZ_SUMMARY=$(FUZZ_OUT)/summary-smoke.txt

-include $(wildcard $(FUZZ_OUT)/obj/agent/*/*.d $(FUZZ_OUT)/obj/*.d $(FUZZ_OUT)/bin/*.d)
