/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User names for uids, from /etc/passwd, read with bounded lines and kept.
 * No NSS lookup (getpwuid): a name service that is slow or down would stall
 * the recording loop; a uid that /etc/passwd does not list keeps its number.
 */
#ifndef BP_USERS_H
#define BP_USERS_H

#include <stdint.h>
#include <stddef.h>

struct bp_users;

/* path NULL: /etc/passwd. NULL only on -ENOMEM; a missing file gives no names */
struct bp_users *bp_users__new(const char *path);
void bp_users__free(struct bp_users *u);

/* the name of uid, or NULL; re-reads the file at most once a second when it changed */
const char *bp_users__name(struct bp_users *u, uint32_t uid);

/*
 * One /etc/passwd line: its name and uid. 0, or -EINVAL for a line that is
 * not NAME:PW:UID:... (comments, NIS "+" entries, a uid that is no number).
 */
int bp_users_parse_line(const char *line, char *name, size_t len, uint32_t *uid);

#endif /* BP_USERS_H */
