/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's optional bearer token: read from a file only its owner can
 * read, and compared in constant time with a request's Authorization
 * header ("Bearer TOKEN", RFC 6750). See docs/agent.md, "Security".
 */
#ifndef BP_TOKEN_H
#define BP_TOKEN_H

#include <stdbool.h>

#define BP_TOKEN_MIN	16	/* characters: shorter tokens are refused as guessable */
#define BP_TOKEN_MAX	4096

/*
 * The token in path: a regular file (not a symlink, FIFO or device) owned
 * by root or by us, with no access for group or other, holding 16 to 4096
 * visible ASCII characters (surrounding whitespace and a final newline
 * are dropped). 0 and *token (malloc()ed), or -errno with *why saying what
 * is wrong in a few words ("readable by group or other").
 */
int bp_token_load(const char *path, char **token, const char **why);

/* authorization is "Bearer TOKEN" (scheme case-insensitive) for this token; constant time */
bool bp_token_ok(const char *token, const char *authorization);

#endif /* BP_TOKEN_H */
