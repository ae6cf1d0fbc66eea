// SPDX-License-Identifier: GPL-2.0
/*
 * The ELF symbolizer on arbitrary bytes, both ways it opens a file: from an
 * fd (a memfd holding the bytes, as a mapped file is opened) and from
 * memory (as the vdso is). Headers, PT_LOADs, build-id, debuglink, then the
 * symbols and lookups at addresses found in the bytes.
 *
 * The input may carry a separate debug file after DEBUG_MARK: it is put
 * where the binary's .gnu_debuglink and build-id send the symbolizer (next
 * to the binary, and in the build-id tree), so that finding, checking and
 * reading debug files is fuzzed too.
 */
#include <errno.h>
#include <limits.h>
#include <sys/mman.h>

#include "fuzz.h"

#include "symbolize/elfsym.h"

#define DEBUG_MARK	"\0BP-DEBUG-FILE\0"
#define DEBUG_MARK_LEN	(sizeof(DEBUG_MARK) - 1)

static char base[PATH_MAX];		/* the scratch directory, absolute */
static char bin_path[PATH_MAX + 16];	/* where the binary "is" (only its name is used) */
static char dbg_root[PATH_MAX + 16];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[PATH_MAX + 32];

	fuzz_init();
	if (!realpath(fuzz_path("."), base))
		abort();
	snprintf(path, sizeof(path), "%s/bin", base);
	snprintf(bin_path, sizeof(bin_path), "%s/bin/app", base);
	snprintf(dbg_root, sizeof(dbg_root), "%s/dbg", base);
	if (mkdir(path, 0700) || mkdir(dbg_root, 0700))
		abort();
	snprintf(path, sizeof(path), "%s/.build-id", dbg_root);
	if (mkdir(path, 0700))
		abort();
	return 0;
}

static void exercise(struct bp_elf *e, const uint8_t *data, size_t size)
{
	uint64_t seed = fuzz_seed(data, size), vaddr;
	struct bp_elf_sym *s;
	uint32_t crc;
	int i;

	(void)bp_elf__build_id(e);
	(void)bp_elf__debuglink(e, &crc);
	for (i = 0; i < 8; i++) {
		uint64_t off = i < 4 ? (uint64_t)i * 4096 : fuzz_rand(&seed) % (size + 1);

		bp_elf__file_to_vaddr(e, off, &vaddr);
	}
	if (bp_elf__load_syms(e))
		return;
	(void)bp_elf__syms_loaded(e);
	(void)bp_elf__sym_source(e);
	(void)bp_elf__debug_path(e);
	/* addresses from the bytes themselves: e_entry, p_vaddr and st_value live there */
	for (i = 0; i < 16 && size >= 8; i++) {
		uint64_t a;

		memcpy(&a, data + fuzz_rand(&seed) % (size - 7), 8);
		s = bp_elf__find(e, a - (i & 3));
		if (s)
			(void)strlen(s->name);
	}
	(void)bp_elf__nr_syms(e);
}

static bool plain_name(const char *s)
{
	const char *p;

	if (!s || !*s || strlen(s) > 64 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (p = s; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return false;
	return true;
}

/* the debug part where the binary's debuglink and build-id point; paths to remove after */
static void place_debug(struct bp_elf *e, const uint8_t *dbg, size_t len, char *link,
			char *bid_dir, char *bid_file)
{
	const char *name = bp_elf__debuglink(e, NULL), *bid = bp_elf__build_id(e);

	link[0] = bid_dir[0] = bid_file[0] = '\0';
	if (plain_name(name) && strcmp(name, "app")) {
		snprintf(link, PATH_MAX + 96, "%s/bin/%s", base, name);
		fuzz_write(link, dbg, len, false);
	}
	if (bid && strlen(bid) > 2 && strspn(bid, "0123456789abcdef") == strlen(bid)) {
		snprintf(bid_dir, PATH_MAX + 96, "%s/.build-id/%.2s", dbg_root, bid);
		if (mkdir(bid_dir, 0700) && errno != EEXIST)
			abort();
		snprintf(bid_file, PATH_MAX + 160, "%s/%s.debug", bid_dir, bid + 2);
		fuzz_write(bid_file, dbg, len, false);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_elf_opts o = { .path = bin_path, .root = "", .debug_root = dbg_root };
	char link[PATH_MAX + 96], bid_dir[PATH_MAX + 96], bid_file[PATH_MAX + 160];
	const uint8_t *mark = memmem(data, size, DEBUG_MARK, DEBUG_MARK_LEN);
	size_t bin_len = mark ? (size_t)(mark - data) : size;
	struct bp_elf *e;
	int fd;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0 || (bin_len && write(fd, data, bin_len) != (ssize_t)bin_len))
		abort();
	if (!bp_elf__open_fd(fd, &o, &e)) {
		link[0] = bid_dir[0] = bid_file[0] = '\0';
		if (mark)
			place_debug(e, mark + DEBUG_MARK_LEN, size - bin_len - DEBUG_MARK_LEN,
				    link, bid_dir, bid_file);
		exercise(e, data, bin_len);
		bp_elf__free(e);
		if (link[0])
			unlink(link);
		if (bid_file[0])
			unlink(bid_file);
		if (bid_dir[0])
			rmdir(bid_dir);
	}
	if (!bp_elf__open_mem(data, bin_len, &e)) {
		exercise(e, data, bin_len);
		bp_elf__free(e);
	}
	return 0;
}
