// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "analyze/interp.h"

static const char *const perl[] = { "perl", "libperl.so", NULL };
static const char *const ruby[] = { "ruby", "libruby", NULL };
static const char *const node[] = { "node", "libnode.so", NULL };
static const char *const java[] = { "java", "libjvm.so", NULL };
static const char *const r_lang[] = { "R", "libR.so", "Rscript", NULL };
static const char *const shell[] = { "bash", "dash", "sh", "zsh", "ksh", "mksh", NULL };
static const char *const lua[] = { "lua", "liblua", "luajit", "libluajit", NULL };
static const char *const php[] = { "php", "libphp", NULL };

static const struct bp_interp interps[] = {
	{ "Perl", "perl", "subs", perl, "Perl's own profiler, Devel::NYTProf (perl -d:NYTProf SCRIPT, "
	  "then nytprofhtml)", false },
	{ "Ruby", "ruby", "methods", ruby, "a Ruby profiler: rbspy (rbspy record -- ruby SCRIPT) or "
	  "stackprof", false },
	{ "JavaScript", "node", "functions", node, "node --perf-basic-prof SCRIPT: node then writes a perf map "
	  "(/tmp/perf-PID.map), which boundprof reads to name the JavaScript functions", true },
	{ "Java", "java", "methods", java, "the JVM's perf map: java -XX:+UnlockDiagnosticVMOptions "
	  "-XX:+DumpPerfMapAtExit (JDK 17+), or perf-map-agent; boundprof reads /tmp/perf-PID.map "
	  "and names the Java methods", true },
	{ "R", "R", "functions", r_lang, "R's own profiler: Rprof() and summaryRprof(), or profvis", false },
	{ "shell", "shell", "functions and commands", shell, "the shell's trace with timestamps (PS4='+ $EPOCHREALTIME ' "
	  "bash -x SCRIPT) to find the slow commands; most of a script's time is usually in the "
	  "programs it starts, which boundprof shows as processes of their own", false },
	{ "Lua", "lua", "functions", lua, "a Lua profiler: LuaJIT's -jp, or a hook-based one such as "
	  "LuaProfiler", false },
	{ "PHP", "php", "functions", php, "a PHP profiler: SPX or Xdebug's profiler", false },
};

/* a file name that starts with name, then ends or goes on with a version */
static bool starts(const char *b, const char *name)
{
	size_t n = strlen(name);
	char c;

	if (strncmp(b, name, n))
		return false;
	c = b[n];
	return !c || c == '.' || c == '-' || c == '_' || (c >= '0' && c <= '9');
}

const struct bp_interp *bp_interp_of_module(const char *module)
{
	const char *slash, *b;
	size_t i, j;

	if (!module)
		return NULL;
	slash = strrchr(module, '/');
	b = slash ? slash + 1 : module;
	for (i = 0; i < sizeof(interps) / sizeof(interps[0]); i++)
		for (j = 0; interps[i].modules[j]; j++)
			if (starts(b, interps[i].modules[j]))
				return &interps[i];
	return NULL;
}

/*
 * The library trees, as a directory name followed by a version directory
 * ("/ruby/3.1.0/", "/perl/5.36/", "/perl5/5.36/") or by nothing
 * ("/perl-base/"), anywhere in the path: Debian's
 * /usr/lib/x86_64-linux-gnu/ruby/3.1.0, a source build's
 * /usr/local/lib/ruby/3.3.0, perlbrew's lib/perl5/5.38.0.
 */
static const struct {
	const char *dir;
	bool versioned;
	const char *binary;
} trees[] = {
	{ "/ruby/", true, "ruby" },
	{ "/perl/", true, "perl" },
	{ "/perl5/", true, "perl" },
	{ "/perl-base/", false, "perl" },
};

/* "3.1.0/...": a version, then a directory's end */
static bool version_dir(const char *v)
{
	size_t n = strspn(v, "0123456789.");

	return n && v[0] != '.' && v[n] == '/';
}

const struct bp_interp *bp_interp_of_path(const char *path)
{
	const char *p;
	size_t i, j;

	if (!path)
		return NULL;
	for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		for (p = strstr(path, trees[i].dir); p; p = strstr(p + 1, trees[i].dir)) {
			const char *v = p + strlen(trees[i].dir);

			if (trees[i].versioned && !version_dir(v))
				continue;
			for (j = 0; j < sizeof(interps) / sizeof(interps[0]); j++)
				if (!strcmp(interps[j].binary, trees[i].binary))
					return &interps[j];
		}
	}
	return NULL;
}

bool bp_interp_script(const char *cmdline, char *buf, size_t len)
{
	const char *s = cmdline, *e;

	if (!s || !len)
		return false;
	/* past the interpreter itself */
	s += strcspn(s, " ");
	while (*s) {
		s += strspn(s, " ");
		e = s + strcspn(s, " ");
		if (e > s && *s != '-') {
			const char *slash = memrchr(s, '/', e - s);

			if (slash)
				s = slash + 1;
			snprintf(buf, len, "%.*s", (int)(e - s), s);
			return true;
		}
		/* -e CODE, -c CODE: the code is on the command line, no script */
		if (e - s == 2 && (s[1] == 'e' || s[1] == 'c' || s[1] == 'E'))
			return false;
		s = e;
	}
	return false;
}
