/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Least privilege for the long-running agent: once its BPF programs are
 * attached, it keeps only the capabilities it still uses, clears the rest
 * from every set (bounding set included, so nothing it runs or execs can
 * regain them) and sets no-new-privs. Which capabilities, and why each:
 * docs/agent.md, "Security".
 */
#ifndef BP_PRIVS_H
#define BP_PRIVS_H

#include <stdint.h>
#include <sys/resource.h>

/* capability bit masks, 1ULL << CAP_* */
typedef uint64_t bp_caps_t;

/* what the agent needs after attaching (bp_privs_agent_keep() says why each) */
bp_caps_t bp_privs_agent_keep(void);

/* the calling process's effective capabilities, or 0 with errno set */
bp_caps_t bp_privs_effective(void);

/*
 * Keep only keep (and what of it we have) in the permitted and effective
 * sets, nothing inheritable or ambient, drop the rest from the bounding set
 * and set no-new-privs. 0 or -errno (logged); a bounding set that cannot be
 * changed (no CAP_SETPCAP) is only a warning.
 */
int bp_privs_restrict(bp_caps_t keep);

/* the names of the capabilities in caps, "cap_bpf,cap_perfmon", into buf */
const char *bp_privs_names(bp_caps_t caps, char *buf, size_t len);

/* raise the soft RLIMIT_NOFILE to want (at most the hard limit); 0 or -errno */
int bp_privs_raise_nofile(rlim_t want);

#endif /* BP_PRIVS_H */
