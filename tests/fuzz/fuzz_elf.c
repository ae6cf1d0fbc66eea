// SPDX-License-Identifier: GPL-2.0
/*
 * The ELF symbolizer on arbitrary bytes, both ways it opens a file: from an
 * fd (a memfd holding the bytes, as a mapped file is opened) and from
 * memory (as the vdso is). Headers, PT_LOADs, build-id, debuglink, then the
 * symbols and lookups at addresses drawn from the input and the symbols.
 */
#include <sys/mman.h>

#include "fuzz.h"

#include "symbolize/elfsym.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_elf *e;
	int fd;

	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	if (!bp_elf__open_fd(fd, NULL, &e)) {
		exercise(e, data, size);
		bp_elf__free(e);
	}
	if (!bp_elf__open_mem(data, size, &e)) {
		exercise(e, data, size);
		bp_elf__free(e);
	}
	return 0;
}
