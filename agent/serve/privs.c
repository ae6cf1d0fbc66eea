// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "serve/privs.h"
#include "util/log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON		38
#endif
#ifndef CAP_BPF
#define CAP_BPF			39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif
#define CAP_MAX_KNOWN		40

#define BIT(c)	(1ULL << (c))

static const char *const names[CAP_MAX_KNOWN + 1] = {
	"cap_chown", "cap_dac_override", "cap_dac_read_search", "cap_fowner", "cap_fsetid",
	"cap_kill", "cap_setgid", "cap_setuid", "cap_setpcap", "cap_linux_immutable",
	"cap_net_bind_service", "cap_net_broadcast", "cap_net_admin", "cap_net_raw",
	"cap_ipc_lock", "cap_ipc_owner", "cap_sys_module", "cap_sys_rawio", "cap_sys_chroot",
	"cap_sys_ptrace", "cap_sys_pacct", "cap_sys_admin", "cap_sys_boot", "cap_sys_nice",
	"cap_sys_resource", "cap_sys_time", "cap_sys_tty_config", "cap_mknod", "cap_lease",
	"cap_audit_write", "cap_audit_control", "cap_setfcap", "cap_mac_override",
	"cap_mac_admin", "cap_syslog", "cap_wake_alarm", "cap_block_suspend", "cap_audit_read",
	"cap_perfmon", "cap_bpf", "cap_checkpoint_restore",
};

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static int caps_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

bp_caps_t bp_privs_agent_keep(void)
{
	/*
	 * Tried one at a time, a process of another user running: what fails
	 * without each (docs/agent.md, "Security").
	 */
	return BIT(CAP_SYS_PTRACE) |		/* /proc/PID/{maps,smaps_rollup,root,map_files} */
	       BIT(CAP_DAC_OVERRIDE) |		/* /proc/PID/clear_refs (0200, the owner's); its files */
	       BIT(CAP_CHECKPOINT_RESTORE) |	/* opening /proc/PID/map_files/ADDR */
	       /*
		* a user's dump through the socket: each loads the dump
		* programs and samples a running thread (collect/dump.h)
		*/
	       BIT(CAP_BPF) | BIT(CAP_PERFMON);
}

bp_caps_t bp_privs_effective(void)
{
	struct __user_cap_data_struct d[2];

	if (caps_get(d))
		return 0;
	return (bp_caps_t)d[1].effective << 32 | d[0].effective;
}

const char *bp_privs_names(bp_caps_t caps, char *buf, size_t len)
{
	size_t off = 0;
	int c;

	buf[0] = '\0';
	for (c = 0; c < 64 && off < len; c++) {
		if (!(caps & BIT(c)))
			continue;
		if (c <= CAP_MAX_KNOWN)
			off += snprintf(buf + off, len - off, "%s%s", off ? "," : "", names[c]);
		else
			off += snprintf(buf + off, len - off, "%scap_%d", off ? "," : "", c);
	}
	if (!off)
		snprintf(buf, len, "none");
	return buf;
}

int bp_privs_restrict(bp_caps_t keep)
{
	struct __user_cap_data_struct d[2];
	bp_caps_t have;
	int c, err, last_cap = CAP_MAX_KNOWN;
	FILE *f;

	err = caps_get(d);
	if (err) {
		bp_err("cannot read our capabilities: %s", strerror(-err));
		return err;
	}
	have = (bp_caps_t)d[1].permitted << 32 | d[0].permitted;
	/* the bounding set first: that needs CAP_SETPCAP, which goes next */
	f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	if (f) {
		if (fscanf(f, "%d", &last_cap) != 1 || last_cap < 0 || last_cap > 63)
			last_cap = CAP_MAX_KNOWN;
		fclose(f);
	}
	for (c = 0; c <= last_cap; c++) {
		if ((keep & BIT(c)) || prctl(PR_CAPBSET_READ, c, 0, 0, 0) != 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0)) {
			bp_warn("capabilities: the bounding set stays as it was: %s",
				strerror(errno));
			break;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		bp_warn("capabilities: cannot clear the ambient set: %s", strerror(errno));
	keep &= have;
	memset(d, 0, sizeof(d));
	d[0].permitted = d[0].effective = (uint32_t)keep;
	d[1].permitted = d[1].effective = (uint32_t)(keep >> 32);
	if ((err = caps_set(d))) {
		bp_err("cannot drop capabilities: %s", strerror(-err));
		return err;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		err = -errno;
		bp_err("cannot set no-new-privs: %s", strerror(-err));
		return err;
	}
	return 0;
}

int bp_privs_raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= want)
		return 0;
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}
