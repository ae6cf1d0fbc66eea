/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the symbolizer test programs: print "NAME RUNTIME VADDR" for
 * each function the test will resolve, then "end", then wait for stdin to
 * close. The test kills us; if it dies first, EOF on stdin ends us too.
 *
 * VADDR comes from the dynamic loader (runtime address minus the load bias
 * of the object holding it), independent of the code under test.
 */
#ifndef SYMFIX_REPORT_H
#define SYMFIX_REPORT_H

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static inline void symfix_report(const char *name, const void *addr)
{
	Dl_info info;
	struct link_map *lm = NULL;
	uintptr_t bias = 0;

	if (dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm)
		bias = lm->l_addr;
	printf("%s %#lx %#lx\n", name, (unsigned long)(uintptr_t)addr,
	       (unsigned long)((uintptr_t)addr - bias));
}

static inline void symfix_wait(void)
{
	char buf[64];

	printf("end\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
}

#endif /* SYMFIX_REPORT_H */
