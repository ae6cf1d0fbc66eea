/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libFuzzer harnesses share: the library's log swallowed (but
 * formatted, so that a bad format argument is found too), scratch files for
 * modules that read paths, and a small deterministic generator for choices
 * drawn from the input (split points, lookup addresses).
 */
#ifndef BP_FUZZ_H
#define BP_FUZZ_H

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static void fuzz_log(enum bp_log_level level, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (getenv("BP_FUZZ_LOG"))
		fprintf(stderr, "bp[%d]: %s\n", level, line);
}

static char fuzz_dir[64];

static int fuzz_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void fuzz_dir_remove(void)
{
	nftw(fuzz_dir, fuzz_rm, 8, FTW_DEPTH | FTW_PHYS);
}

/* a file in this run's scratch directory, under the current one (the build folder) */
static inline const char *fuzz_path(const char *name)
{
	static char path[128];

	if (!fuzz_dir[0]) {
		snprintf(fuzz_dir, sizeof(fuzz_dir), "scratch-%d", (int)getpid());
		if (mkdir(fuzz_dir, 0700) && access(fuzz_dir, W_OK))
			abort();
		atexit(fuzz_dir_remove);
	}
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
	return path;
}

/*
 * path holds data (a new file), or gets it appended; aborts when it cannot
 * (the fuzzer's fault, not ours). New, not truncated: ext4 flushes a file
 * truncated to 0 when it is closed, which made each run wait for the disk.
 */
static inline void fuzz_write(const char *path, const void *data, size_t len, bool append)
{
	int fd;

	if (!append)
		unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_EXCL), 0600);

	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len))
		abort();
	close(fd);
}

static inline void fuzz_init(void)
{
	bp_log_set(fuzz_log);
}

/* xorshift64*, seeded from the input: the same input makes the same choices */
static inline uint64_t fuzz_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static inline uint64_t fuzz_seed(const uint8_t *data, size_t size)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ size;
	size_t i;

	for (i = 0; i < size && i < 64; i++)
		h = (h ^ data[i]) * 0x100000001b3ULL;
	return h | 1;
}

#endif /* BP_FUZZ_H */
