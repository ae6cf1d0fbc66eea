# SPDX-License-Identifier: GPL-2.0
#
# Included from tests/tests.mk: for each CPython 3 installed (pylayout/find.sh),
# a program built against its headers that checks the layout table's row of
# its version (tests/unit/pylayout/layout_check.c). test_python runs them all
# and says which versions are missing. Debian's headers come from
# libpython3.X-dev, installed here when only the interpreter is.

PYLAYOUT_SRC	:= tests/unit/pylayout
PYLAYOUT_OUT	:= $(OUT)/tests/data/pylayout
PYLAYOUT_LIST	:= $(shell sh $(PYLAYOUT_SRC)/find.sh 2>/dev/null | tr ' ' ':')
PYLAYOUT_DEPS	:= $(PYLAYOUT_SRC)/layout_check.c agent/symbolize/python_layout.c \
		   agent/symbolize/python_layout.h bpf/python.h

# $(1): the version's name, $(2): its include directory
define pylayout_rule
$(PYLAYOUT_OUT)/check-$(1): $(PYLAYOUT_DEPS) | $(DEPS_STAMP)
	$$(call msg,CC-PY,$$@)
	$(Q)mkdir -p $$(@D)
	$(if $(findstring -debian,$(1)),$(Q)$(NEED) -l $(OUT)/apt-python.log \
		'$(2)/Python.h=libpython$(patsubst %-debian,%,$(1))-dev')
	$(Q)$(CC) -std=gnu11 -w -I$(2) -I$(2)/internal -Ibpf -Iagent -o $$@ \
		$(PYLAYOUT_SRC)/layout_check.c agent/symbolize/python_layout.c
UNIT_DATA	+= $(PYLAYOUT_OUT)/check-$(1)
endef

$(foreach e,$(PYLAYOUT_LIST),$(eval $(call pylayout_rule,$(word 1,$(subst :, ,$(e))),$(word 2,$(subst :, ,$(e))))))
