# SPDX-License-Identifier: GPL-2.0
#
# Included from tests/tests.mk: the binaries the symbolizer tests resolve,
# built into $(OUT)/tests/data (the tests get it as BP_TEST_DATA).
#   symfix_pie, symfix_nopie     PIE and non-PIE executables (symfix_alpha)
#   libsymfix.so, symfix_uselib  a shared library (versioned symbols) and its user
#   libsymfix_nosym.so           the library stripped to .dynsym
#   symfix_dbglink               stripped, debug file next to it (.gnu_debuglink)
#   symfix_dotdebug              stripped, debug file in .debug/ next to it
#   symfix_rootlink              stripped, debug file under debugroot/<its dir>/
#   symfix_buildid               stripped, no debuglink, debug file under
#                                debugroot/.build-id/xx/yyyy.debug
#   symfix_nobid                 stripped, no build-id, debug file next to it
#                                (found by the debuglink's CRC alone)
#   perf-sample.map              a JIT perf map with good and bad lines

SYMFIX_SRC	:= tests/unit/symfix
comma		:= ,
SYMFIX_OUT	:= $(OUT)/tests/data
SYMFIX_DBGROOT	:= $(SYMFIX_OUT)/debugroot
SYMFIX_CFLAGS	:= -g -O1 -fno-inline -fno-omit-frame-pointer -Wall -Wextra \
		   -D_GNU_SOURCE -Wl,--build-id=sha1
SYMFIX_HDRS	:= $(SYMFIX_SRC)/symfix_report.h $(SYMFIX_SRC)/symfix_lib.h
OBJCOPY		?= objcopy
STRIP		?= strip
READELF		?= readelf

SYMFIX_BINS	:= $(addprefix $(SYMFIX_OUT)/,symfix_pie symfix_nopie libsymfix.so \
		   symfix_uselib libsymfix_nosym.so symfix_dbglink symfix_dotdebug \
		   symfix_rootlink symfix_buildid symfix_nobid perf-sample.map \
		   symfix_inl symfix_inl_noar)
UNIT_DATA	+= $(SYMFIX_BINS)

$(SYMFIX_BINS): | $(DEPS_STAMP)

$(SYMFIX_OUT)/symfix_pie: $(SYMFIX_SRC)/symfix_prog.c $(SYMFIX_HDRS)
	$(call msg,CC-FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -fPIE -pie -o $@ $<

$(SYMFIX_OUT)/symfix_nopie: $(SYMFIX_SRC)/symfix_prog.c $(SYMFIX_HDRS)
	$(call msg,CC-FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -fno-pie -no-pie -o $@ $<

$(SYMFIX_OUT)/libsymfix.so: $(SYMFIX_SRC)/symfix_lib.c $(SYMFIX_SRC)/symfix_lib.map $(SYMFIX_HDRS)
	$(call msg,CC-FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -fPIC -shared -Wl,-soname,libsymfix.so \
		-Wl,--version-script=$(SYMFIX_SRC)/symfix_lib.map -o $@ $<

$(SYMFIX_OUT)/libsymfix_nosym.so: $(SYMFIX_OUT)/libsymfix.so
	$(call msg,STRIP,$@)
	$(Q)$(STRIP) -o $@ $<

$(SYMFIX_OUT)/symfix_uselib: $(SYMFIX_SRC)/symfix_uselib.c $(SYMFIX_OUT)/libsymfix.so
	$(call msg,CC-FIX,$@)
	$(Q)$(CC) $(SYMFIX_CFLAGS) -o $@ $< -L$(SYMFIX_OUT) -lsymfix \
		-Wl,-rpath,'$$ORIGIN'

# inlined code, with .debug_aranges and without (clang and rustc write none)
$(SYMFIX_OUT)/symfix_inl: $(SYMFIX_SRC)/symfix_inline.c
	$(call msg,CC-FIX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -Wall -o $@ $<

$(SYMFIX_OUT)/symfix_inl_noar: $(SYMFIX_OUT)/symfix_inl
	$(call msg,OBJCOPY,$@)
	$(Q)$(OBJCOPY) --remove-section=.debug_aranges $< $@

# $(1): target, $(2): FN, $(3): where the debug file goes (empty: none),
# $(4): extra flags
define symfix_split
	$(call msg,CC-FIX,$(1))
	$(Q)mkdir -p $(dir $(1))
	$(Q)$(CC) $(SYMFIX_CFLAGS) $(4) -DFN=$(2) -o $(1).full $<
	$(Q)if [ -n "$(3)" ]; then \
		mkdir -p $(dir $(3)) && \
		$(OBJCOPY) --only-keep-debug $(1).full $(3) && \
		$(STRIP) -o $(1) $(1).full && \
		$(OBJCOPY) --add-gnu-debuglink=$(3) $(1); \
	else \
		id=$$($(READELF) -n $(1).full | awk '/Build ID:/ { print $$3 }') && \
		test -n "$$id" && \
		d=$(SYMFIX_DBGROOT)/.build-id/$$(echo $$id | cut -c1-2) && \
		mkdir -p $$d && \
		$(OBJCOPY) --only-keep-debug $(1).full $$d/$$(echo $$id | cut -c3-).debug && \
		$(STRIP) -o $(1) $(1).full; \
	fi
	$(Q)rm -f $(1).full
endef

$(SYMFIX_OUT)/symfix_dbglink: $(SYMFIX_SRC)/symfix_prog.c $(SYMFIX_HDRS)
	$(call symfix_split,$@,symfix_delta,$(SYMFIX_OUT)/symfix_dbglink.debug)

$(SYMFIX_OUT)/symfix_dotdebug: $(SYMFIX_SRC)/symfix_prog.c $(SYMFIX_HDRS)
	$(call symfix_split,$@,symfix_eta,$(SYMFIX_OUT)/.debug/symfix_dotdebug.debug)

$(SYMFIX_OUT)/symfix_rootlink: $(SYMFIX_SRC)/symfix_prog.c $(SYMFIX_HDRS)
	$(call symfix_split,$@,symfix_theta,$(SYMFIX_DBGROOT)$(SYMFIX_OUT)/symfix_rootlink.debug)

$(SYMFIX_OUT)/symfix_buildid: $(SYMFIX_SRC)/symfix_prog.c $(SYMFIX_HDRS)
	$(call symfix_split,$@,symfix_epsilon,)

$(SYMFIX_OUT)/symfix_nobid: $(SYMFIX_SRC)/symfix_prog.c $(SYMFIX_HDRS)
	$(call symfix_split,$@,symfix_iota,$(SYMFIX_OUT)/symfix_nobid.debug,-Wl$(comma)--build-id=none)

$(SYMFIX_OUT)/perf-sample.map: $(SYMFIX_SRC)/perf-sample.map
	$(call msg,CP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@
