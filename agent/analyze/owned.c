// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analyze/interp.h"
#include "analyze/owned.h"

/*
 * Modules nobody profiling their program builds, by the start of their file
 * name: each is tuned by its own maintainers, so time inside one is best cut
 * by calling it less, not by editing it. See docs/classification.md.
 */
static const char *const foreign[] = {
	/* the C runtime and the dynamic loader */
	"libc.so", "libc-2.", "libc.musl", "ld-linux", "ld-musl", "ld-2.", "libpthread",
	"libdl.so", "libdl-2.", "librt.so", "librt-2.", "[vdso]", "[vsyscall]",
	/* maths */
	"libm.so", "libm-2.", "libmvec",
	/* the C++ and compiler runtimes */
	"libstdc++", "libgcc_s", "libc++", "libgomp",
	/* compression */
	"libz.so",
	/* BLAS and LAPACK */
	"libopenblas", "libblas", "libcblas", "liblapack", "libmkl",
	/* the Python interpreter */
	"libpython", "python2", "python3",
};

static char own[BP_OWN_MAX][256];
static unsigned int nr_own;

int bp_own_add(const char *module)
{
	size_t n = strlen(module);

	if (!n || strchr(module, '/') || n >= sizeof(own[0]))
		return -EINVAL;
	if (nr_own >= BP_OWN_MAX)
		return -ENOSPC;
	memcpy(own[nr_own++], module, n + 1);
	return 0;
}

void bp_own_reset(void)
{
	nr_own = 0;
}

/* name is prefix itself, or prefix and then a version: "libfoo.so" names libfoo.so.1 */
static bool names(const char *module, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(module, name, n) && (!module[n] || module[n] == '.' || module[n] == '-');
}

static const char *base(const char *module)
{
	const char *slash = strrchr(module, '/');

	return slash ? slash + 1 : module;
}

bool bp_module_foreign(const char *module)
{
	const char *b = base(module);
	size_t i;

	/* an interpreter's own C code: its scripts' authors cannot change it */
	if (bp_interp_of_module(b))
		return true;
	for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		if (!strncmp(b, foreign[i], strlen(foreign[i])))
			return true;
	return false;
}

static bool own_given(const char *b)
{
	unsigned int i;

	for (i = 0; i < nr_own; i++)
		if (names(b, own[i]))
			return true;
	return false;
}

/* the perf map's names for a runtime's own generated code (V8, HotSpot) */
static const char *const runtime_jit[] = {
	"Builtin:", "Stub:", "BytecodeHandler:", "Handler:", "RegExp:", "Interpreter",
	"StubRoutines", "Builtins_",
};

/*
 * Code in anonymous memory that a perf map names (node --perf-basic-prof,
 * the JVM's perf map) is the program's JIT-compiled functions, unless it is
 * the runtime's own stubs.
 */
static bool jit_named(const struct bp_frame *f)
{
	const char *b = base(f->module);
	size_t i;

	if (!f->name || (strncmp(b, "[anon", 5) && strncmp(b, "memfd:", 6)))
		return false;
	for (i = 0; i < sizeof(runtime_jit) / sizeof(runtime_jit[0]); i++)
		if (!strncmp(f->name, runtime_jit[i], strlen(runtime_jit[i])))
			return false;
	return true;
}

bool bp_frame_owned(const struct bp_frame *f)
{
	const char *b;

	if (f->kernel || !f->module)
		return false;
	/* a Python function is the user's code whatever runs it */
	if (f->python)
		return true;
	/*
	 * Markers of the walk ([truncated]) and anonymous memory are nobody's
	 * to edit; an unnamed address in a module of the user's (a stripped
	 * binary) is still theirs.
	 */
	b = base(f->module);
	if (f->name && f->name[0] == '[')
		return false;
	if (b[0] == '[' || !strncmp(b, "memfd:", 6))
		return jit_named(f);
	return own_given(b) || (!bp_module_foreign(b) && !bp_interp_of_path(f->path));
}

bool bp_frame_foreign(const struct bp_frame *f)
{
	const char *b;

	if (f->kernel)
		return true;
	if (!f->module || f->python)
		return false;
	b = base(f->module);
	return !own_given(b) && (bp_module_foreign(b) || bp_interp_of_path(f->path));
}

/* the suffixes of the CPU-specific variants glibc selects with ifuncs */
static const char *const variants[] = {
	"_avx", "_sse", "_evex", "_erms", "_fma", "_ssse3", "_unaligned", "_generic", "_power",
	"_sve", "_asimd", "_chk",
};

const char *bp_short_name(const char *name, const char *module, char *buf, size_t len)
{
	const char *n = name, *b = base(module);
	size_t cut, i;

	/* V8's maths are JavaScript's Math: its users know them so */
	if (!strncmp(n, "v8::base::ieee754::", 19) && !strstr(n + 19, "::")) {
		snprintf(buf, len, "Math.%s", n + 19);
		return buf;
	}
	snprintf(buf, len, "%s", name);
	if (strncmp(b, "libc", 4) && strncmp(b, "libm", 4))
		return buf;
	if (!strncmp(n, "__ieee754_", 10))
		n += 10;
	else if (!strncmp(n, "__", 2))
		n += 2;
	cut = strlen(n);
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		const char *v = strstr(n, variants[i]);

		if (v && v > n && (size_t)(v - n) < cut)
			cut = v - n;
	}
	/* a name left whole was not a variant: keep its underscores, they are part of it */
	if (cut == strlen(n) && n != name + (strncmp(name, "__ieee754_", 10) ? 0 : 10))
		return buf;
	snprintf(buf, len, "%.*s", (int)cut, n);
	return buf;
}
