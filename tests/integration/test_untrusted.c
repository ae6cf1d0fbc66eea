// SPDX-License-Identifier: GPL-2.0
/*
 * What an unprivileged local user can make `boundprof record` (run as root)
 * read, hang on or keep. Each test replays an attack as nobody (setpriv),
 * records the attacker's process as root, and checks what must hold: no
 * root-only content in any output, record finishing by itself, its peak RSS
 * and its open fds within a bound of a benign recording made the same way
 * (the bounds are in docs/symbols.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "harness.h"

/* what an attack may add to a benign recording's peak RSS and open fds */
#define RSS_MARGIN_KB	(32 * 1024)
#define FDS_MARGIN	16
/* where the attacker's code runs (and what the planted perf map names) */
#define JIT_ADDR	0x7e5500000000ULL
#define RECORD_S	"2"
#define TIMEOUT_S	90

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static char attacker_dir[64];
static char planted[4][64];	/* /tmp/perf-PID.map files the attacker made */
static int nr_planted;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	int i;

	h_cleanup();
	for (i = 0; i < nr_planted; i++)
		unlink(planted[i]);
	nr_planted = 0;
	if (attacker_dir[0]) {
		nftw(attacker_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		attacker_dir[0] = '\0';
	}
	return 0;
}

/* a directory the attacker owns, outside the test's root-only one */
static const char *attacker_home(void)
{
	if (!attacker_dir[0]) {
		strcpy(attacker_dir, "/tmp/bp-attacker-XXXXXX");
		if (!mkdtemp(attacker_dir))
			fail_msg("mkdtemp: %s", strerror(errno));
		if (chown(attacker_dir, 65534, 65534) || chmod(attacker_dir, 0755))
			fail_msg("chown %s: %s", attacker_dir, strerror(errno));
	}
	return attacker_dir;
}

/* a file only root may read, holding a marker that must appear nowhere */
static const char *plant_secret(char *marker, size_t len)
{
	const char *path = h_path("secret");
	FILE *f;

	snprintf(marker, len, "BPSECRET%ld%d", (long)time(NULL), getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%llx 1000 %s_function\n", JIT_ADDR, marker);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(chmod(h_tmpdir(), 0700), 0);
	return path;
}

/*
 * Run the attacker's shell command as nobody; the command ends by exec'ing
 * the attacker (same pid). Returns its pid once it printed "ready".
 */
static pid_t start_attacker(const char *script)
{
	char line[256];
	int out = -1;
	pid_t pid;

	pid = h_spawn(ARGV("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
			   "sh", "-c", (char *)script),
		      &out);
	assert_true(pid > 0);
	if (h_read_line(out, line, sizeof(line), 30) || strncmp(line, "ready", 5))
		fail_msg("attacker did not start: %s", script);
	close(out);
	return pid;
}

static void note_planted(pid_t pid)
{
	if (nr_planted < 4)
		snprintf(planted[nr_planted++], sizeof(planted[0]), "/tmp/perf-%d.map", pid);
}

struct measured {
	int exit_code;
	long maxrss_kb;		/* its VmHWM, the peak RSS of what it exec'd */
	int max_fds;		/* most open fds seen while it ran */
	long long max_rchar;	/* bytes it read (/proc/PID/io), as last seen */
	char *out, *err;
};

static long long rchar_of(pid_t pid)
{
	char path[64], line[256];
	long long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "rchar:", 6))
			n = strtoll(line + 6, NULL, 10);
	fclose(f);
	return n;
}

static void sf_write_empty(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

/*
 * VmHWM, not getrusage(): the rusage of a forked child counts the pages it
 * shared with us before its exec. A high-water mark only grows, so the last
 * reading holds every peak but one in the last poll before exit.
 */
static long vm_hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* run argv to its end (SIGKILL after timeout_s), watching its fds */
static void run_measured(char *const argv[], struct measured *m)
{
	const char *out = h_path("run.out"), *err = h_path("run.err");
	struct timespec t0, now;
	int status = 0;
	bool killed = false;
	pid_t pid;

	int execd[2];
	char c;

	memset(m, 0, sizeof(*m));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(pipe2(execd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	/* EOF once it exec'd: before, its memory and fds are a copy of ours */
	close(execd[1]);
	while (read(execd[0], &c, 1) < 0 && errno == EINTR)
		;
	close(execd[0]);
	for (;;) {
		pid_t got = waitpid(pid, &status, WNOHANG);
		long kb;
		int fds;

		if (got == pid)
			break;
		fds = count_fds(pid);
		if (fds > m->max_fds)
			m->max_fds = fds;
		kb = vm_hwm_kb(pid);
		if (kb > m->maxrss_kb)
			m->maxrss_kb = kb;
		if (rchar_of(pid) > m->max_rchar)
			m->max_rchar = rchar_of(pid);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!killed && now.tv_sec - t0.tv_sec > TIMEOUT_S) {
			fprintf(stderr, "record did not finish in %d s: killed\n", TIMEOUT_S);
			kill(pid, SIGKILL);
			killed = true;
		}
		usleep(20 * 1000);
	}
	m->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	m->out = h_slurp(out, NULL);
	m->err = h_slurp(err, NULL);
	if (!m->out)
		m->out = strdup("");
	if (!m->err)
		m->err = strdup("");
	fprintf(stderr, "record: exit %d, peak RSS %ld KiB, at most %d fds\n", m->exit_code,
		m->maxrss_kb, m->max_fds);
}

static void measured_free(struct measured *m)
{
	free(m->out);
	free(m->err);
}

/* record pid for a few seconds into every output format; all outputs' bytes */
static void record_pid(pid_t pid, struct measured *m, char **all, size_t *all_len)
{
	static const char *const outs[] = { "r.json", "r.folded", "r.svg", "r.pb.gz" };
	char pidbuf[16], *text;
	size_t i, len, cap;

	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	run_measured(ARGV((char *)h_bin(), "record", "-p", pidbuf, "-d", RECORD_S, "-o",
			  (char *)h_path(outs[0]), "-o", (char *)h_path(outs[1]), "-o",
			  (char *)h_path(outs[2]), "-o", (char *)h_path(outs[3])),
		     m);
	if (m->exit_code)
		fprintf(stderr, "--- stderr:\n%s---\n", m->err);
	if (!all)
		return;
	if (m->exit_code)
		fail_msg("record exited %d", m->exit_code);
	cap = strlen(m->out) + strlen(m->err) + 2;
	*all = malloc(cap);
	assert_non_null(*all);
	len = (size_t)snprintf(*all, cap, "%s\n%s", m->out, m->err);
	for (i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		char buf[65536];
		gzFile gz;
		int n;

		/* gzread reads plain files as they are, and the .pb.gz unpacked */
		gz = gzopen(h_path(outs[i]), "rb");
		if (!gz)
			fail_msg("no output %s", outs[i]);
		while ((n = gzread(gz, buf, sizeof(buf))) > 0) {
			text = realloc(*all, cap + (size_t)n + 1);
			assert_non_null(text);
			*all = text;
			cap += (size_t)n + 1;
			memcpy(*all + len, buf, (size_t)n);
			len += (size_t)n;
			(*all)[len] = '\0';
		}
		gzclose(gz);
	}
	*all_len = len;
}

/* a binary string search: the pprof profile holds NULs */
static bool contains(const char *hay, size_t len, const char *needle)
{
	return memmem(hay, len, needle, strlen(needle)) != NULL;
}

/* label, whole: not followed by another hex digit ("[anon]+0x0", not "+0x0a") */
static bool label_at(const char *hay, size_t len, const char *label)
{
	size_t n = strlen(label);
	const char *p = hay, *end = hay + len;

	while ((p = memmem(p, (size_t)(end - p), label, n))) {
		p += n;
		if (p == end || !*p || !strchr("0123456789abcdef", *p))
			return true;
	}
	return false;
}

/* --- a benign recording of the same shape, for the bounds --------------- */

static long base_rss_kb;
static int base_fds;

static void baseline(void)
{
	struct measured m;
	char script[512];
	pid_t pid;

	if (base_rss_kb)
		return;
	snprintf(script, sizeof(script), "exec %s jit %llx 60", h_fixture("attacker"), JIT_ADDR);
	pid = start_attacker(script);
	record_pid(pid, &m, NULL, NULL);
	assert_int_equal(m.exit_code, 0);
	base_rss_kb = m.maxrss_kb;
	base_fds = m.max_fds;
	measured_free(&m);
	kill(pid, SIGKILL);
	fprintf(stderr, "benign recording: peak RSS %ld KiB, %d fds\n", base_rss_kb, base_fds);
}

static void expect_clean(const char *all, size_t len, const char *marker)
{
	if (contains(all, len, marker))
		fail_msg("the root-only file's marker %s is in an output", marker);
	/* unnamed frames: no absolute address of another process or the kernel */
	if (contains(all, len, "[unknown]+0x") || contains(all, len, "[kernel]+0xffff"))
		fail_msg("an absolute address in a frame label");
}

/* --- 1: a perf map that is a symlink to a root-only file ------------------ */

static void perfmap_symlink(bool own_mount_ns)
{
	char marker[64], script[2048], *all = NULL;
	const char *secret = plant_secret(marker, sizeof(marker));
	struct measured m;
	size_t len = 0;
	pid_t pid;

	if (own_mount_ns)
		/*
		 * its own /tmp: the absolute link would resolve in ours. The
		 * attacker is opened first: a checkout under /tmp is hidden by
		 * the new mount, and it runs from the fd.
		 */
		snprintf(script, sizeof(script),
			 "exec unshare -Urm sh -c 'exec 3< %s && mount -t tmpfs none /tmp && "
			 "ln -s %s /tmp/perf-$$.map && exec /proc/self/fd/3 jit %llx 60'",
			 h_fixture("attacker"), secret, JIT_ADDR);
	else
		snprintf(script, sizeof(script), "ln -s %s /tmp/perf-$$.map && exec %s jit %llx 60",
			 secret, h_fixture("attacker"), JIT_ADDR);
	pid = start_attacker(script);
	if (!own_mount_ns)
		note_planted(pid);
	record_pid(pid, &m, &all, &len);
	assert_int_equal(m.exit_code, 0);
	expect_clean(all, len, marker);
	/* its code was sampled, and stayed unnamed */
	assert_true(contains(all, len, "[anon]+0x"));
	free(all);
	measured_free(&m);
}

/*
 * JIT code with no perf map, all its time at the first byte of its page:
 * still labelled by its offset ("[anon]+0x0"). The label once dropped an
 * offset of 0, and on a CPU that fuses the loop's two instructions every
 * sample of the plain jit loop lands there: the label then depended on the
 * machine (issue 23). jit0 puts the samples at 0 on every x86 CPU.
 */
static void test_jit_at_page_start(void **state)
{
	char script[512], *all = NULL;
	struct measured m;
	size_t len = 0;
	pid_t pid;

#if !defined(__x86_64__)
	fprintf(stderr, "SKIP: the jit0 fixture is x86-64 code\n");
	skip();
#endif
	snprintf(script, sizeof(script), "exec %s jit0 %llx 60", h_fixture("attacker"), JIT_ADDR);
	pid = start_attacker(script);
	record_pid(pid, &m, &all, &len);
	assert_int_equal(m.exit_code, 0);
	if (!label_at(all, len, "[anon]+0x0"))
		fail_msg("no frame labelled [anon]+0x0: the JIT frame at its page's first byte "
			 "lost its offset");
	expect_clean(all, len, "no-marker-planted");
	free(all);
	measured_free(&m);
}

static void test_perfmap_symlink(void **state)
{
	perfmap_symlink(false);
}

static void test_perfmap_symlink_own_mount_ns(void **state)
{
	/* unprivileged user namespaces are a kernel setting, not a given */
	if (system("setpriv --reuid=nobody --regid=nogroup --clear-groups "
		   "unshare -Urm true 2>/dev/null")) {
		fprintf(stderr, "SKIP: no unprivileged user namespaces on this kernel\n");
		skip();
	}
	perfmap_symlink(true);
}

/* the control: the user's own perf map names the user's own code */
static void test_perfmap_own_file_named(void **state)
{
	char script[1024], *all = NULL;
	struct measured m;
	size_t len = 0;
	pid_t pid;

	snprintf(script, sizeof(script),
		 "printf '%llx 1000 legit_jit_function\\n' > /tmp/perf-$$.map && exec %s jit %llx 60",
		 JIT_ADDR, h_fixture("attacker"), JIT_ADDR);
	pid = start_attacker(script);
	note_planted(pid);
	record_pid(pid, &m, &all, &len);
	assert_int_equal(m.exit_code, 0);
	assert_true(contains(all, len, "legit_jit_function"));
	free(all);
	measured_free(&m);
}

/*
 * The user's own perf map, inside its own pid and mount namespaces (a
 * container): named in a system-wide recording, where the process is
 * first seen at its first sample and whose it is (its pid in its
 * namespace, its mount namespace) comes from BPF, not from /proc.
 */
static void test_perfmap_own_pid_ns_named(void **state)
{
	char script[1024], *all = NULL;
	struct measured m;
	size_t len;

	if (system("setpriv --reuid=nobody --regid=nogroup --clear-groups "
		   "unshare -Urpfm true 2>/dev/null")) {
		fprintf(stderr, "SKIP: no unprivileged user and pid namespaces on this kernel\n");
		skip();
	}
	/* pid 1 in its namespace: its map is /tmp/perf-1.map in its own /tmp */
	snprintf(script, sizeof(script),
		 "exec unshare -Urpm --kill-child sh -c 'exec 3< %s && mount -t tmpfs none /tmp && "
		 "printf \"%llx 1000 ns_jit_function\\n\" > /tmp/perf-$$.map && "
		 "exec /proc/self/fd/3 jit %llx 60'",
		 h_fixture("attacker"), JIT_ADDR, JIT_ADDR);
	start_attacker(script);
	run_measured(ARGV((char *)h_bin(), "record", "-a", "-d", RECORD_S, "-o",
			  (char *)h_path("a.folded")),
		     &m);
	if (m.exit_code)
		fail_msg("record -a exited %d: %s", m.exit_code, m.err);
	all = h_slurp(h_path("a.folded"), &len);
	assert_non_null(all);
	if (!strstr(all, "ns_jit_function"))
		fail_msg("the perf map of a process in its own pid and mount namespaces named "
			 "nothing in a system-wide recording");
	free(all);
	measured_free(&m);
}

/* --- 2: a debug link that names a FIFO, or a path ------------------------- */

/* the spin fixture copied into the attacker's directory, stripped, with a debug link */
static pid_t start_stripped_spin(const char *link_steps)
{
	char script[4096];

	snprintf(script, sizeof(script),
		 "cd %s && cp %s prog && objcopy --only-keep-debug prog prog.debug && "
		 "strip -s prog && %s && exec ./prog 60",
		 attacker_home(), h_fixture("spin"), link_steps);
	return start_attacker(script);
}

static void test_debuglink_fifo(void **state)
{
	char *all = NULL;
	struct measured m;
	size_t len = 0;
	pid_t pid;

	pid = start_stripped_spin("objcopy --add-gnu-debuglink=prog.debug prog && "
				  "rm prog.debug && mkfifo prog.debug");
	record_pid(pid, &m, &all, &len);
	/* finished by itself: the FIFO was not opened for reading */
	assert_int_equal(m.exit_code, 0);
	assert_true(contains(all, len, "prog+0x"));
	free(all);
	measured_free(&m);
}

/* the control: the user's own debug file next to the binary names it */
static void test_debuglink_own_file_named(void **state)
{
	char *all = NULL;
	struct measured m;
	size_t len = 0;
	pid_t pid;

	pid = start_stripped_spin("objcopy --add-gnu-debuglink=prog.debug prog");
	record_pid(pid, &m, &all, &len);
	assert_int_equal(m.exit_code, 0);
	assert_true(contains(all, len, "spin_hot"));
	free(all);
	measured_free(&m);
}

/*
 * A debug link naming a path ("../" to a huge file only root may read, as
 * /proc/kcore is where the kernel has one): read whole for its CRC, it would
 * never end.
 */
static void test_debuglink_path_to_huge_file(void **state)
{
	const char *huge = h_path("huge");
	unsigned char blob[256] = { 0 };
	char name[128], path[256], *all = NULL;
	struct measured m;
	size_t len = 0, off;
	FILE *f;
	pid_t pid;

	sf_write_empty(huge);
	assert_int_equal(truncate(huge, 1LL << 40), 0);
	assert_int_equal(chmod(huge, 0600), 0);
	snprintf(name, sizeof(name), "../%s/huge", strrchr(h_tmpdir(), '/') + 1);
	memcpy(blob, name, strlen(name));
	off = (strlen(name) + 4) & ~(size_t)3;
	snprintf(path, sizeof(path), "%s/link.bin", attacker_home());
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(blob, 1, off + 4, f), off + 4);
	fclose(f);
	assert_int_equal(chown(path, 65534, 65534), 0);
	pid = start_stripped_spin("rm prog.debug && "
				  "objcopy --add-section .gnu_debuglink=link.bin prog");
	record_pid(pid, &m, &all, &len);
	assert_int_equal(m.exit_code, 0);
	if (m.max_rchar > (1LL << 30))
		fail_msg("record read %lld bytes", m.max_rchar);
	assert_true(contains(all, len, "prog+0x"));
	free(all);
	measured_free(&m);
}

/* --- 3: a huge sparse perf map with no newline ----------------------------- */

static void perfmap_sparse(const char *size)
{
	char script[1024], *all = NULL;
	struct measured m;
	size_t len = 0;
	pid_t pid;

	baseline();
	snprintf(script, sizeof(script), "truncate -s %s /tmp/perf-$$.map && exec %s jit %llx 60",
		 size, h_fixture("attacker"), JIT_ADDR);
	pid = start_attacker(script);
	note_planted(pid);
	record_pid(pid, &m, &all, &len);
	assert_int_equal(m.exit_code, 0);
	assert_true(contains(all, len, "[anon]+0x"));
	if (m.maxrss_kb > base_rss_kb + RSS_MARGIN_KB)
		fail_msg("peak RSS %ld KiB with a %s perf map, %ld KiB without", m.maxrss_kb, size,
			 base_rss_kb);
	free(all);
	measured_free(&m);
}

static void test_perfmap_sparse_huge(void **state)
{
	/* past the size bound: refused from its size */
	perfmap_sparse("256M");
}

static void test_perfmap_sparse_under_bound(void **state)
{
	/* under it: read through a fixed buffer, the one "line" skipped */
	perfmap_sparse("48M");
}

/* --- 4: many distinct files mapped executable ----------------------------- */

static void test_many_mapped_files(void **state)
{
	char script[1024];
	struct measured m;
	pid_t pid;

	baseline();
	snprintf(script, sizeof(script), "exec %s maps %s 1100 60", h_fixture("attacker"),
		 attacker_home());
	pid = start_attacker(script);
	record_pid(pid, &m, NULL, NULL);
	assert_int_equal(m.exit_code, 0);
	assert_null(strstr(m.err, "Too many open files"));
	if (m.max_fds > base_fds + FDS_MARGIN)
		fail_msg("%d fds open with 1100 mapped files, %d without", m.max_fds, base_fds);
	measured_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_jit_at_page_start, teardown),
		cmocka_unit_test_teardown(test_perfmap_symlink, teardown),
		cmocka_unit_test_teardown(test_perfmap_symlink_own_mount_ns, teardown),
		cmocka_unit_test_teardown(test_perfmap_own_file_named, teardown),
		cmocka_unit_test_teardown(test_perfmap_own_pid_ns_named, teardown),
		cmocka_unit_test_teardown(test_debuglink_fifo, teardown),
		cmocka_unit_test_teardown(test_debuglink_own_file_named, teardown),
		cmocka_unit_test_teardown(test_debuglink_path_to_huge_file, teardown),
		cmocka_unit_test_teardown(test_perfmap_sparse_huge, teardown),
		cmocka_unit_test_teardown(test_perfmap_sparse_under_bound, teardown),
		cmocka_unit_test_teardown(test_many_mapped_files, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("untrusted", tests, NULL, NULL);
}
