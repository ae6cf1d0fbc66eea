# SPDX-License-Identifier: GPL-2.0
#
# One build for everything: BPF objects -> skeleton -> libagent.a -> ./boundprof.
#   make            build ./boundprof (installs Debian build dependencies when missing)
#   make test       unit tests (ASan+UBSan), integration tests (root, real BPF), test-kernels
#   make test-kernels  boot Debian 12's 6.1 under qemu and record fixtures in it
#   make test-fresh    test-deps in a clean clone with the test tools hidden (FULL=1: make test)
#   make bench      benchmarks; print ratios against peers measured in the same run
#   make deps       install the Debian packages the build needs (only the missing ones)
#   make install    PREFIX=/usr/local (binary, man page, bash completion, systemd unit)
#   make uninstall  remove what make install installed
#   V=1             show full commands; O=DIR puts objects in DIR (default .output)
#   CFLAGS, CPPFLAGS, LDFLAGS, LDLIBS are honoured; libbpf, libelf, libdw,
#   zlib and liblzma come from pkg-config (PKG_CONFIG_PATH for a libbpf of
#   your own), libiberty (-liberty) from the compiler's default paths

O		?= .output
OUT		:= $(abspath $(O))
PREFIX		?= /usr/local
ARCH		:= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

CC		?= gcc
CLANG		?= clang
BPFTOOL		?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
LLVM_STRIP	?= llvm-strip
PKG_CONFIG	?= pkg-config

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(OUT)/%,%,$(2))";
endif

# a library's flags from pkg-config; without its .pc (or pkg-config), the fallback
pc_cflags	= $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs		= $(or $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null),$(2))
LIB_CFLAGS	:= $(call pc_cflags,libbpf) $(call pc_cflags,libelf) $(call pc_cflags,zlib) \
		   $(call pc_cflags,libdw) $(call pc_cflags,liblzma)
# libiberty (the demangler) has no .pc: Debian ships it as a static library
LIB_LDLIBS	:= $(call pc_libs,libbpf,-lbpf) $(call pc_libs,libdw,-ldw) \
		   $(call pc_libs,libelf,-lelf) $(call pc_libs,zlib,-lz) \
		   $(call pc_libs,liblzma,-llzma) -liberty

WARNINGS	:= -Wall -Wextra -Wshadow -Wmissing-prototypes -Wno-unused-parameter
CFLAGS		?= -g -O2
# frame pointers: a profiler that can be profiled (by itself, too) at ~1% cost
ALL_CFLAGS	:= $(CPPFLAGS) $(CFLAGS) -fno-omit-frame-pointer -std=gnu11 $(WARNINGS) \
		   -D_GNU_SOURCE -MMD -MP -I$(OUT) -Ibpf -Iagent $(LIB_CFLAGS)
ALL_LDLIBS	:= $(LIB_LDLIBS) -lm $(LDLIBS)
# -mcpu=v3: atomic fetch-and-add, xchg and cmpxchg (kernel 5.12+); libbpf's
# flags for its bpf_helpers.h
BPF_CFLAGS	:= -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Wextra \
		   -Wno-unused-parameter -Wno-missing-declarations -MMD -MP \
		   -Ivmlinux/$(ARCH) -Ibpf $(call pc_cflags,libbpf)

# proc.bpf.c defines the shared maps; bpftool 7.1's linker only resolves an
# extern map whose definition comes earlier on the command line
BPF_SRCS	:= bpf/proc.bpf.c $(filter-out bpf/proc.bpf.c bpf/dump.bpf.c,$(sort $(wildcard bpf/*.bpf.c)))
BPF_OBJS	:= $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKEL		:= $(OUT)/boundprof.skel.h
# `boundprof dump` loads its own program, never verified when recording
DUMP_SKEL	:= $(OUT)/dump.skel.h
# the library, one folder per pipeline stage (docs/architecture.md); the
# flame graph renderer is embedded from a C file generated into $(OUT)
STAGES		:= util model proc symbolize collect analyze export serve
AGENT_SRCS	:= $(sort $(foreach d,$(STAGES),$(wildcard agent/$(d)/*.c)))
GEN_SRCS	:= $(OUT)/agent/export/flame_assets.c
AGENT_OBJS	:= $(patsubst %.c,$(OUT)/%.o,$(AGENT_SRCS)) $(GEN_SRCS:.c=.o)
CLI_SRCS	:= $(sort $(wildcard cli/*.c))
CLI_OBJS	:= $(patsubst %.c,$(OUT)/%.o,$(CLI_SRCS))
LIBAGENT	:= $(OUT)/libagent.a
DEPS_STAMP	:= $(OUT)/.deps-ok

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test test-unit test-integration test-deps test-fresh test-kernels bench \
	install uninstall clean

all: boundprof

# ---------------------------------------------------------------------------
# Dependencies. Checked once per output tree; each missing command or header
# is installed from its Debian package when running as root (and only the
# missing ones: scripts/need.sh says why), otherwise the command to run is
# printed. Items are WHAT=PACKAGE, WHAT a command, a path or a <header> (found
# by the compiler with CPPFLAGS and pkg-config's flags), '|' alternatives.
NEED		:= NEED_CPP="$(CC) $(CPPFLAGS) $(LIB_CFLAGS) -E" sh scripts/need.sh
BUILD_NEEDS	:= $(CLANG)=clang $(LLVM_STRIP)=llvm $(PKG_CONFIG)=pkg-config \
		   'bpftool|/usr/sbin/bpftool=bpftool' '<bpf/libbpf.h>=libbpf-dev' \
		   '<gelf.h>=libelf-dev' '<zlib.h>=zlib1g-dev' '<cmocka.h>=libcmocka-dev' \
		   '<elfutils/libdw.h>=libdw-dev' '<libiberty/demangle.h>=libiberty-dev' \
		   '<lzma.h>=liblzma-dev' gcc=gcc make=make

$(DEPS_STAMP):
	$(Q)mkdir -p $(OUT)
	$(Q)$(NEED) -l $(OUT)/apt.log $(BUILD_NEEDS)
	$(Q)touch $@

deps:
	$(Q)mkdir -p $(OUT)
	$(Q)$(NEED) -l $(OUT)/apt.log $(BUILD_NEEDS)

# ---------------------------------------------------------------------------
# BPF: each .bpf.c compiles alone; bpftool links them (resolving the shared
# extern maps) into one object and one skeleton.
$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(DEPS_STAMP)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/boundprof.bpf.o: $(BPF_OBJS)
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(SKEL): $(OUT)/boundprof.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name boundprof_bpf > $@

$(DUMP_SKEL): $(OUT)/bpf/dump.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name dump_bpf > $@

# ---------------------------------------------------------------------------
# Userspace
$(OUT)/agent/%.o $(OUT)/cli/%.o: | $(DEPS_STAMP)
$(OUT)/agent/%.o: agent/%.c | $(SKEL) $(DUMP_SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUT)/agent/export/flame_assets.c: agent/export/gen_flame_assets.sh agent/export/flame.js \
				    agent/export/flame.css | $(DEPS_STAMP)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sh $< $@

$(OUT)/agent/export/flame_assets.o: $(OUT)/agent/export/flame_assets.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUT)/cli/%.o: cli/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Icli -c $< -o $@

$(LIBAGENT): $(AGENT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

boundprof: $(CLI_OBJS) $(LIBAGENT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# ---------------------------------------------------------------------------
# Tests and benchmarks
include tests/tests.mk
include tests/fuzz/fuzz.mk
include bench/bench.mk

install: boundprof
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0755 boundprof $(DESTDIR)$(PREFIX)/bin/boundprof
	install -m 0644 docs/boundprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/boundprof.1
	install -m 0644 docs/boundprof.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/boundprof
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed 's|/usr/local/bin/boundprof|$(PREFIX)/bin/boundprof|' docs/boundprof-agent.service \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/boundprof-agent.service
	chmod 0644 $(DESTDIR)$(PREFIX)/lib/systemd/system/boundprof-agent.service

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/boundprof $(DESTDIR)$(PREFIX)/share/man/man1/boundprof.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/boundprof \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/boundprof-agent.service

clean:
	rm -rf $(OUT) boundprof

-include $(wildcard $(OUT)/bpf/*.d $(OUT)/agent/*/*.d $(OUT)/cli/*.d)
