/* SPDX-License-Identifier: GPL-2.0 */
/* Hex digits, for the /proc text formats (maps, kallsyms, perf maps). */
#ifndef BP_HEX_H
#define BP_HEX_H

/* the value of one hex digit, or -1 */
static inline int bp_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* BP_HEX_H */
