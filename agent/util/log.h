/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent never prints: it reports through one callback that the program
 * embedding it installs (the CLI prints to stderr, tests capture).
 */
#ifndef BP_LOG_H
#define BP_LOG_H

#include <stdarg.h>

enum bp_log_level {
	BP_LOG_ERROR = 0,
	BP_LOG_WARN,
	BP_LOG_INFO,
	BP_LOG_DEBUG,
};

typedef void (*bp_log_fn)(enum bp_log_level level, const char *fmt, va_list ap);

/* install the callback; NULL silences the agent */
void bp_log_set(bp_log_fn fn);
void bp_log(enum bp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define bp_err(...)	bp_log(BP_LOG_ERROR, __VA_ARGS__)
#define bp_warn(...)	bp_log(BP_LOG_WARN, __VA_ARGS__)
#define bp_info(...)	bp_log(BP_LOG_INFO, __VA_ARGS__)
#define bp_dbg(...)	bp_log(BP_LOG_DEBUG, __VA_ARGS__)

#endif /* BP_LOG_H */
