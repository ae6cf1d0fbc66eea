/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ELF facts that find a CPython interpreter in a file: named symbols of
 * any type (_PyRuntime, Py_Version, PyCode_Type, ...) from .dynsym and
 * .symtab, the bytes of its initialized data (Py_Version's value, the
 * _Py_DebugOffsets image, a function's first instructions), and the
 * version string. The file is anyone's: header counts, tables and reads
 * are bounded as in elfsym.h, and nothing it names is opened.
 */
#ifndef BP_PYTHON_ELF_H
#define BP_PYTHON_ELF_H

#include <stddef.h>
#include <stdint.h>

struct bp_pyelf;

/* from an fd, which it owns from then on (closed by bp_pyelf__free); 0 or -errno */
int bp_pyelf__open(int fd, struct bp_pyelf **out);
void bp_pyelf__free(struct bp_pyelf *e);

/* a symbol's address and size: 0, or -ENOENT */
int bp_pyelf__sym(struct bp_pyelf *e, const char *name, uint64_t *addr, uint64_t *size);
/* the same, in .dynsym only (small: a quick look at a file that is likely not Python) */
int bp_pyelf__dynsym(struct bp_pyelf *e, const char *name, uint64_t *addr, uint64_t *size);

/*
 * len bytes of the image at vaddr, from the file (zeros where a segment's
 * memory extends past its file bytes): 0, or -ENOENT outside every
 * loadable segment
 */
int bp_pyelf__read(struct bp_pyelf *e, uint64_t vaddr, void *buf, size_t len);

/* the loadable segments (file offset, virtual address, file size), up to max; how many */
size_t bp_pyelf__loads(const struct bp_pyelf *e, uint64_t *off, uint64_t *vaddr,
		       uint64_t *filesz, size_t max);

/*
 * Where glibc's pthread_getspecific() finds a key's value (x86-64, keys
 * below 32), read from the function's own instructions: at thread pointer
 * + *off + key * *size. 0, or -ENOENT for a libc that does it otherwise.
 */
int bp_pyelf__glibc_tsd(struct bp_pyelf *e, uint32_t *off, uint32_t *size);

/* the first "3.MINOR.PATCH" string of the file into out: 0, or -ENOENT */
int bp_pyelf__version_string(struct bp_pyelf *e, unsigned int minor, char *out, size_t len);

#endif /* BP_PYTHON_ELF_H */
