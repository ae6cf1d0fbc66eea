// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include "analyze/syscalls.h"

/* arch/x86/entry/syscalls/syscall_64.tbl: the calls programs make most */
static const char *const x86_64[] = {
	[0] = "read", [1] = "write", [2] = "open", [3] = "close", [4] = "stat", [5] = "fstat",
	[6] = "lstat", [7] = "poll", [8] = "lseek", [9] = "mmap", [10] = "mprotect",
	[11] = "munmap", [12] = "brk", [13] = "rt_sigaction", [14] = "rt_sigprocmask",
	[16] = "ioctl", [17] = "pread64", [18] = "pwrite64", [19] = "readv", [20] = "writev",
	[21] = "access", [22] = "pipe", [23] = "select", [24] = "sched_yield", [25] = "mremap",
	[26] = "msync", [28] = "madvise", [32] = "dup", [33] = "dup2", [35] = "nanosleep",
	[39] = "getpid", [40] = "sendfile", [41] = "socket", [42] = "connect", [43] = "accept",
	[44] = "sendto", [45] = "recvfrom", [46] = "sendmsg", [47] = "recvmsg",
	[48] = "shutdown", [49] = "bind", [50] = "listen", [54] = "setsockopt",
	[55] = "getsockopt", [56] = "clone", [57] = "fork", [59] = "execve", [60] = "exit",
	[61] = "wait4", [62] = "kill", [72] = "fcntl", [73] = "flock", [74] = "fsync",
	[75] = "fdatasync", [76] = "truncate", [77] = "ftruncate", [78] = "getdents",
	[79] = "getcwd", [80] = "chdir", [82] = "rename", [83] = "mkdir", [84] = "rmdir",
	[87] = "unlink", [89] = "readlink", [96] = "gettimeofday", [102] = "getuid",
	[110] = "getppid", [158] = "arch_prctl", [186] = "gettid", [200] = "tkill",
	[201] = "time", [202] = "futex", [213] = "epoll_create", [217] = "getdents64",
	[228] = "clock_gettime", [230] = "clock_nanosleep", [231] = "exit_group",
	[232] = "epoll_wait", [233] = "epoll_ctl", [234] = "tgkill", [257] = "openat",
	[262] = "newfstatat", [270] = "pselect6", [271] = "ppoll", [275] = "splice",
	[276] = "tee", [277] = "sync_file_range", [281] = "epoll_pwait", [284] = "eventfd",
	[285] = "fallocate", [288] = "accept4", [290] = "eventfd2", [291] = "epoll_create1",
	[293] = "pipe2", [295] = "preadv", [296] = "pwritev", [299] = "recvmmsg",
	[302] = "prlimit64", [307] = "sendmmsg", [318] = "getrandom", [319] = "memfd_create",
	[326] = "copy_file_range", [327] = "preadv2", [328] = "pwritev2", [332] = "statx",
	[334] = "rseq", [424] = "pidfd_send_signal", [425] = "io_uring_setup",
	[426] = "io_uring_enter", [427] = "io_uring_register", [435] = "clone3",
	[437] = "openat2", [439] = "faccessat2", [441] = "epoll_pwait2",
};

const char *bp_syscall_name(uint32_t nr)
{
	return nr < sizeof(x86_64) / sizeof(x86_64[0]) ? x86_64[nr] : NULL;
}

const char *bp_syscall_label(uint32_t nr, char *buf, size_t len)
{
	const char *name = bp_syscall_name(nr);

	if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "syscall %u", nr);
	return buf;
}
