// SPDX-License-Identifier: GPL-2.0
#include "util/log.h"

static bp_log_fn log_fn;

void bp_log_set(bp_log_fn fn)
{
	log_fn = fn;
}

void bp_log(enum bp_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	log_fn(level, fmt, ap);
	va_end(ap);
}
