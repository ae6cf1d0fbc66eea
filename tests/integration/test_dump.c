// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof dump -p PID on real programs nobody here wrote: Debian's
 * python3.11 with its main thread reading a FIFO whose writer is `sleep`,
 * a thread reading a Unix socket whose other end `cat` reads, and a thread
 * spinning; `sleep` itself in nanosleep; `cat` reading the socket; a
 * client and Debian's http.server waiting on each other over TCP. The
 * oracles: what the kernel says of each thread (/proc/TID/stat, /proc/TID/
 * syscall, /proc/PID/fd), the processes the test made (their pids and
 * comms), the fixture's own source (its lines), and eu-stack (elfutils),
 * run in the same test after the dumps, for every native frame.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })
#define PYTHON "/usr/bin/python3.11"
#define MAX_FR 160

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static void print_run(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s---\n", what,
		r->exit_code, r->out, r->err);
}

static const char *fixture_py(const char *name)
{
	static char buf[1024];
	const char *src = getenv("BP_SRC");

	snprintf(buf, sizeof(buf), "%s/tests/fixtures/%s", src ? src : ".", name);
	return buf;
}

/* the line of the first line containing text after the line containing after */
static int source_line(const char *file, const char *after, const char *text)
{
	char line[512];
	int n = 0, seen = 0;
	FILE *f = fopen(file, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (!seen && strstr(line, after))
			seen = 1;
		else if (seen && strstr(line, text)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no '%s' after '%s' in %s", text, after, file);
	return 0;
}

/* fork and exec argv with these as fds 0, 1 and 3 (-1: /dev/null, none); tracked */
static pid_t spawn_io(char *const argv[], int in, int out, int fd3)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		dup2(in >= 0 ? in : null, 0);
		dup2(out >= 0 ? out : null, 1);
		dup2(null, 2);
		if (fd3 >= 0 && fd3 != 3)
			dup2(fd3, 3);
		if (fd3 >= 0)
			fcntl(3, F_SETFD, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	h_adopt(pid);
	return pid;
}

static void read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
}

/* what the kernel says a thread is doing: its state letter and system call line */
struct kthread {
	char state;
	long sys;		/* -1: running, not in a call */
	unsigned long long arg0;
};

static void kernel_view(pid_t pid, pid_t tid, struct kthread *k)
{
	char path[128], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	read_small(path, buf, sizeof(buf));
	p = strrchr(buf, ')');
	k->state = p && p[1] ? p[2] : '?';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	read_small(path, buf, sizeof(buf));
	k->sys = strcmp(buf, "running") ? strtol(buf, &p, 10) : -1;
	k->arg0 = k->sys >= 0 ? strtoull(p, NULL, 16) : 0;
}

/* wait until the thread is blocked in system call sys */
static bool wait_blocked(pid_t pid, pid_t tid, long sys)
{
	struct kthread k;
	int i;

	for (i = 0; i < 400; i++) {
		kernel_view(pid, tid, &k);
		if (k.state == 'S' && k.sys == sys)
			return true;
		h_sleep(0.05);
	}
	fprintf(stderr, "thread %d of %d: state %c, syscall %ld, not blocked in %ld\n", tid, pid,
		k.state, k.sys, sys);
	return false;
}

static const struct bp_json *thread_of(const struct bp_json *d, pid_t tid)
{
	const struct bp_json *ts = bp_json_get(d, "threads");
	int64_t v;
	size_t i;

	for (i = 0; ts && i < bp_json_len(ts); i++)
		if (!bp_json_int(bp_json_get(bp_json_at(ts, i), "tid"), &v) && v == tid)
			return bp_json_at(ts, i);
	fail_msg("thread %d not in the dump", tid);
	return NULL;
}

static const char *jstr(const struct bp_json *o, const char *path)
{
	const struct bp_json *v = bp_json_path(o, path);

	return v ? bp_json_str(v) : NULL;
}

static int64_t jint(const struct bp_json *o, const char *path)
{
	int64_t v = -1;

	if (bp_json_int(bp_json_path(o, path), &v))
		return -1;
	return v;
}

static void assert_str(const char *what, const char *got, const char *want)
{
	if (!got || strcmp(got, want))
		fail_msg("%s: '%s', the kernel or the test says '%s'", what, got ? got : "(null)",
			 want);
}

static struct bp_json *dump_json(pid_t pid)
{
	char p[16];
	struct run r;
	struct bp_json *j;

	snprintf(p, sizeof(p), "%d", pid);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "dump", "-p", p, "--json"), 60, &r), 0);
	if (r.exit_code != 0)
		print_run("dump --json", &r);
	assert_int_equal(r.exit_code, 0);
	j = bp_json_parse(r.out, r.out_len, NULL, 0);
	if (!j)
		print_run("dump --json (not JSON)", &r);
	assert_non_null(j);
	h_run_free(&r);
	return j;
}

/*
 * The Python functions on a thread's stack, innermost first, must hold
 * want[] in this order (other frames may come between); line[i] > 0 is the
 * line the source (file) says function want[i] is at, 0 any line of it, -1
 * a function of another file.
 */
static void assert_python(const char *what, const struct bp_json *t, const char *file,
			  const char *const *want, const int *line, int n)
{
	const struct bp_json *fr = bp_json_get(t, "frames");
	size_t i;
	int k = 0;

	for (i = 0; fr && i < bp_json_len(fr) && k < n; i++) {
		const struct bp_json *f = bp_json_at(fr, i);
		const char *kind = jstr(f, "kind"), *fn = jstr(f, "function"), *src = jstr(f, "file");

		if (!kind || strcmp(kind, "python") || !fn || strcmp(fn, want[k]))
			continue;
		if (line[k] >= 0 && (!src || !strstr(src, file)))
			fail_msg("%s: %s is in '%s', not %s", what, fn, src ? src : "?", file);
		if (line[k] > 0 && jint(f, "line") != line[k])
			fail_msg("%s: %s at line %lld, the source has it at %d", what, fn,
				 (long long)jint(f, "line"), line[k]);
		k++;
	}
	if (k < n)
		fail_msg("%s: Python function %s not on the stack (after %d of %d)", what, want[k],
			 k, n);
}

/* --- eu-stack ---------------------------------------------------------------- */

struct nframe {
	char module[128];
	uint64_t vaddr;
};

/* where each file is loaded: ELF vaddr = address - bias */
struct load {
	char path[256];
	uint64_t bias;
};

static int loads_of(pid_t pid, struct load *l, int max)
{
	char path[64], line[1024], file[256];
	unsigned long long start, end, off;
	FILE *f;
	int n = 0, i;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned char ehdr[18] = { 0 };
		FILE *e;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %255s", &start, &end, &off, file) != 4 ||
		    file[0] != '/' || off != 0)
			continue;
		for (i = 0; i < n && strcmp(l[i].path, file); i++)
			;
		if (i < n)
			continue;
		e = fopen(file, "r");
		if (!e || fread(ehdr, 1, sizeof(ehdr), e) != sizeof(ehdr)) {
			if (e)
				fclose(e);
			continue;
		}
		fclose(e);
		snprintf(l[n].path, sizeof(l[n].path), "%s", file);
		/* ET_EXEC: loaded where its addresses say; ET_DYN: at its first mapping */
		l[n].bias = ehdr[16] == 2 ? 0 : start;
		n++;
	}
	fclose(f);
	return n;
}

/* eu-stack's native frames of thread tid, innermost first */
static int eu_stack(const char *out, pid_t tid, const struct load *l, int nl,
		    struct nframe *fr, int max)
{
	char want[32], line[1024];
	const char *p = out, *nl_at;
	int n = 0, in = 0, i;

	snprintf(want, sizeof(want), "TID %d:", tid);
	while (*p) {
		unsigned long long a;
		const char *mod;

		nl_at = strchr(p, '\n');
		snprintf(line, sizeof(line), "%.*s", nl_at ? (int)(nl_at - p) : (int)strlen(p), p);
		p = nl_at ? nl_at + 1 : p + strlen(p);
		if (!strncmp(line, "TID ", 4)) {
			in = !strcmp(line, want);
			continue;
		}
		if (!in || line[0] != '#' || n == max)
			continue;
		mod = strstr(line, " - /");
		if (sscanf(line, "#%*d %llx", &a) != 1 || !mod)
			continue;
		mod += 3;
		for (i = 0; i < nl && strcmp(l[i].path, mod); i++)
			;
		snprintf(fr[n].module, sizeof(fr[n].module), "%s", strrchr(mod, '/') + 1);
		fr[n].vaddr = i < nl ? a - l[i].bias : a;
		n++;
	}
	return n;
}

/* our native frames must be eu-stack's, one for one */
static void assert_native(const char *what, const struct bp_json *t, const struct nframe *eu,
			  int ne)
{
	const struct bp_json *nf = bp_json_get(t, "native_frames");
	int n = nf ? (int)bp_json_len(nf) : 0, i, bad = -1;

	for (i = 0; i < n && i < ne && bad < 0; i++) {
		const struct bp_json *f = bp_json_at(nf, i);
		const char *mod = jstr(f, "module");
		uint64_t off = (uint64_t)jint(f, "offset");

		/* a return address is named one byte back, where the call is */
		if (!mod || strcmp(mod, eu[i].module) ||
		    (off != eu[i].vaddr && off + 1 != eu[i].vaddr))
			bad = i;
	}
	if (bad < 0 && n == ne && n > 0) {
		printf("    %s: %d native frames, each as eu-stack has it\n", what, n);
		return;
	}
	fprintf(stderr, "%s: native frames differ from eu-stack's (at %d; %d vs %d)\n", what,
		bad, n, ne);
	for (i = 0; i < n || i < ne; i++) {
		const struct bp_json *f = i < n ? bp_json_at(nf, i) : NULL;

		fprintf(stderr, "  #%-2d ours %-14s %#-10llx %-28s eu-stack %-14s %#llx\n", i,
			f ? jstr(f, "module") : "-", f ? (unsigned long long)jint(f, "offset") : 0,
			f && jstr(f, "function") ? jstr(f, "function") : "",
			i < ne ? eu[i].module : "-", i < ne ? (unsigned long long)eu[i].vaddr : 0);
	}
	fail();
}

/* these C functions are among the thread's native frames, innermost first, and it is whole */
static void assert_native_has(const char *what, const struct bp_json *t,
			      const char *const *want, int n)
{
	const struct bp_json *nf = bp_json_get(t, "native_frames");
	size_t i;
	int k = 0;

	for (i = 0; nf && i < bp_json_len(nf) && k < n; i++) {
		const char *fn = jstr(bp_json_at(nf, i), "function");

		if (fn && !strcmp(fn, want[k]))
			k++;
	}
	if (k < n)
		fail_msg("%s: %s not among its native frames", what, want[k]);
	if (bp_json_bool(bp_json_get(t, "stack_cut")) != 0)
		fail_msg("%s: its native stack was cut", what);
}

/* the text form says what the JSON does: each thread's line and its frames, in order */
static void assert_text_matches(const char *text, const struct bp_json *d, pid_t tid)
{
	const struct bp_json *t = thread_of(d, tid), *fr = bp_json_get(t, "frames");
	char head[128], want[512];
	const char *at;
	size_t i;

	snprintf(head, sizeof(head), "Thread %d (%s): %s", tid, jstr(t, "comm"),
		 jstr(t, "state"));
	at = strstr(text, head);
	if (!at)
		fail_msg("text has no '%s'", head);
	for (i = 0; i < bp_json_len(fr); i++) {
		const struct bp_json *f = bp_json_at(fr, i);
		const char *fn = jstr(f, "function");

		if (!fn)
			continue;
		if (!strcmp(jstr(f, "kind"), "python"))
			snprintf(want, sizeof(want), "    %s (%s:%lld)", fn, jstr(f, "file"),
				 (long long)jint(f, "line"));
		else
			snprintf(want, sizeof(want), "    %s", fn);
		at = strstr(at, want);
		if (!at)
			fail_msg("thread %d: frame %zu '%s' of the JSON not in the text, in order",
				 tid, i, want);
		at += strlen(want);
	}
}

/* --- the cases ------------------------------------------------------------------ */

static void test_dump_python_pipe_socket_spin(void **state)
{
	const char *fifo = h_path("fifo"), *tids = h_path("tids");
	const char *fix = fixture_py("pydump.py");
	struct bp_json *dp, *ds, *dc;
	const struct bp_json *t;
	struct kthread k;
	struct load loads[64], loads_s[64], loads_c[64];
	int nls, nlc;
	struct nframe eu[MAX_FR];
	char buf[4096], path[128], link[256], pycomm[32], pid_s[16], *text;
	pid_t py, sl, cat, main_tid = 0, sock_tid = 0, spin_tid = 0;
	int hold, w, r, sv[2], i, nl, ne;
	struct run run;

	if (!h_need_root())
		skip();
	if (access(PYTHON, X_OK) || !h_have("eu-stack"))
		fail_msg("%s and eu-stack (elfutils) are needed: make test-deps", PYTHON);
	/* a FIFO: the blocked read has a path, and its writer is `sleep` */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	hold = open(fifo, O_RDWR | O_CLOEXEC);
	w = open(fifo, O_WRONLY | O_CLOEXEC);
	r = open(fifo, O_RDONLY | O_CLOEXEC);
	assert_true(hold >= 0 && w >= 0 && r >= 0);
	close(hold);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	sl = spawn_io(ARGV("/usr/bin/sleep", "1000"), -1, w, -1);
	cat = spawn_io(ARGV("/usr/bin/cat"), sv[1], -1, -1);
	py = spawn_io(ARGV(PYTHON, (char *)fix, (char *)tids, "3"), r, -1, sv[0]);
	close(w);
	close(r);
	close(sv[0]);
	close(sv[1]);

	/* the fixture's threads, once each is where it should be */
	for (i = 0; i < 400; i++) {
		read_small(tids, buf, sizeof(buf));
		if (strstr(buf, "ready"))
			break;
		h_sleep(0.05);
	}
	assert_non_null(strstr(buf, "ready"));
	sscanf(strstr(buf, "main "), "main %d", &main_tid);
	sscanf(strstr(buf, "sock "), "sock %d", &sock_tid);
	sscanf(strstr(buf, "spin "), "spin %d", &spin_tid);
	assert_int_equal(main_tid, py);
	assert_true(wait_blocked(py, main_tid, 0));
	assert_true(wait_blocked(py, sock_tid, 0));
	assert_true(wait_blocked(sl, sl, 230));
	assert_true(wait_blocked(cat, cat, 0));
	nl = loads_of(py, loads, 64);
	nls = loads_of(sl, loads_s, 64);
	nlc = loads_of(cat, loads_c, 64);

	dp = dump_json(py);
	ds = dump_json(sl);
	dc = dump_json(cat);
	snprintf(pid_s, sizeof(pid_s), "%d", py);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "dump", "-p", pid_s), 60, &run), 0);
	assert_int_equal(run.exit_code, 0);
	text = strdup(run.out);
	printf("%s", run.out);
	h_run_free(&run);

	snprintf(path, sizeof(path), "/proc/%d/comm", py);
	read_small(path, pycomm, sizeof(pycomm));
	assert_str("process comm", jstr(dp, "comm"), pycomm);
	assert_non_null(jstr(dp, "python"));

	/* main: reading the FIFO sleep writes to, in read_input() */
	t = thread_of(dp, main_tid);
	kernel_view(py, main_tid, &k);
	assert_int_equal(k.state, 'S');
	assert_str("main: state", jstr(t, "state"), "sleeping");
	assert_str("main: wait class", jstr(t, "wait_class"), "pipe");
	assert_int_equal(jint(t, "syscall.nr"), k.sys);
	assert_int_equal(jint(t, "fd.fd"), (int64_t)k.arg0);
	snprintf(path, sizeof(path), "/proc/%d/fd/%llu", py, k.arg0);
	memset(link, 0, sizeof(link));
	assert_true(readlink(path, link, sizeof(link) - 1) > 0);
	assert_str("main: file", jstr(t, "fd.path"), link);
	assert_str("main: file is the FIFO", link, fifo);
	assert_int_equal(jint(t, "peer.pid"), sl);
	assert_str("main: peer", jstr(t, "peer.comm"), "sleep");
	assert_str("main: direction", jstr(t, "direction"), "input");
	assert_python("main", t, "pydump.py", (const char *const[]){ "read_input", "main", "<module>" },
		      (const int[]){ source_line(fix, "def read_input", "return sys.stdin"),
				     source_line(fix, "def main", "read_input()"), 0 }, 3);

	/* sock: reading the Unix socket cat holds the other end of, in wait_for_peer() */
	t = thread_of(dp, sock_tid);
	kernel_view(py, sock_tid, &k);
	assert_int_equal(k.state, 'S');
	assert_str("sock: state", jstr(t, "state"), "sleeping");
	assert_str("sock: wait class", jstr(t, "wait_class"), "pipe");
	assert_int_equal(jint(t, "syscall.nr"), k.sys);
	assert_int_equal(jint(t, "fd.fd"), 3);
	assert_str("sock: fd kind", jstr(t, "fd.kind"), "unix");
	snprintf(path, sizeof(path), "/proc/%d/fd/3", py);
	memset(link, 0, sizeof(link));
	assert_true(readlink(path, link, sizeof(link) - 1) > 0);
	assert_str("sock: file", jstr(t, "fd.path"), link);
	assert_int_equal(jint(t, "peer.pid"), cat);
	assert_str("sock: peer", jstr(t, "peer.comm"), "cat");
	assert_python("sock", t, "pydump.py",
		      (const char *const[]){ "wait_for_peer", "run", "Thread.run" },
		      (const int[]){ source_line(fix, "def wait_for_peer", "os.read(fd, 1)"),
				     source_line(fix, "def run", "fn(*args)"), -1 }, 3);

	/* spin: on a CPU or waiting for one, in spin_forever() */
	t = thread_of(dp, spin_tid);
	kernel_view(py, spin_tid, &k);
	assert_int_equal(k.state, 'R');
	if (strcmp(jstr(t, "state"), "running") && strcmp(jstr(t, "state"), "runnable"))
		fail_msg("spin: state %s, the kernel says R", jstr(t, "state"));
	assert_str("spin: wait class", jstr(t, "wait_class"),
		   strcmp(jstr(t, "state"), "running") ? "runqueue" : "oncpu");
	assert_python("spin", t, "pydump.py", (const char *const[]){ "spin_forever", "run" },
		      (const int[]){ 0, source_line(fix, "def run", "fn(*args)") }, 2);
	/* found on a CPU, it was taken again by a sample while it ran: one moment's registers */
	if (!strcmp(jstr(t, "state"), "running") &&
	    bp_json_bool(bp_json_get(t, "registers_stale")) != 0)
		fail_msg("spin: running, but no sample of it came");
	assert_native_has("spin", t, (const char *const[]){ "_PyEval_EvalFrameDefault",
							    "start_thread" }, 2);

	/* sleep: in nanosleep */
	t = thread_of(ds, sl);
	kernel_view(sl, sl, &k);
	assert_str("sleep: state", jstr(t, "state"), "sleeping");
	assert_str("sleep: wait class", jstr(t, "wait_class"), "sleep");
	assert_int_equal(jint(t, "syscall.nr"), k.sys);
	assert_str("sleep: syscall", jstr(t, "syscall.name"), "clock_nanosleep");

	/* cat: reading its end of the socket; the other end is the Python process's */
	t = thread_of(dc, cat);
	assert_str("cat: state", jstr(t, "state"), "sleeping");
	assert_str("cat: wait class", jstr(t, "wait_class"), "pipe");
	assert_int_equal(jint(t, "fd.fd"), 0);
	assert_int_equal(jint(t, "peer.pid"), py);
	assert_str("cat: peer", jstr(t, "peer.comm"), pycomm);

	/* the text says what the JSON says */
	assert_text_matches(text, dp, main_tid);
	assert_text_matches(text, dp, sock_tid);

	/* last, since it stops the threads: eu-stack's native frames */
	assert_int_equal(h_run(ARGV("eu-stack", "-m", "-p", pid_s), 60, &run), 0);
	ne = eu_stack(run.out, main_tid, loads, nl, eu, MAX_FR);
	assert_native("python main", thread_of(dp, main_tid), eu, ne);
	ne = eu_stack(run.out, sock_tid, loads, nl, eu, MAX_FR);
	assert_native("python sock", thread_of(dp, sock_tid), eu, ne);
	h_run_free(&run);
	snprintf(pid_s, sizeof(pid_s), "%d", sl);
	assert_int_equal(h_run(ARGV("eu-stack", "-m", "-p", pid_s), 60, &run), 0);
	ne = eu_stack(run.out, sl, loads_s, nls, eu, MAX_FR);
	assert_native("sleep", thread_of(ds, sl), eu, ne);
	h_run_free(&run);
	snprintf(pid_s, sizeof(pid_s), "%d", cat);
	assert_int_equal(h_run(ARGV("eu-stack", "-m", "-p", pid_s), 60, &run), 0);
	ne = eu_stack(run.out, cat, loads_c, nlc, eu, MAX_FR);
	assert_native("cat", thread_of(dc, cat), eu, ne);
	h_run_free(&run);

	free(text);
	bp_json_free(dp);
	bp_json_free(ds);
	bp_json_free(dc);
}

/* the first thread of pid blocked in system call sys; 0 when none within 20 s */
static pid_t blocked_thread(pid_t pid, long sys)
{
	char path[64];
	struct dirent *de;
	struct kthread k;
	DIR *d;
	int i;

	for (i = 0; i < 400; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		d = opendir(path);
		while (d && (de = readdir(d))) {
			pid_t tid = atoi(de->d_name);

			if (tid <= 0)
				continue;
			kernel_view(pid, tid, &k);
			if (k.state == 'S' && k.sys == sys) {
				closedir(d);
				return tid;
			}
		}
		if (d)
			closedir(d);
		h_sleep(0.05);
	}
	return 0;
}

/*
 * A TCP connection on this host: a client waiting for the answer of
 * Debian's http.server, whose handler thread waits for the client's
 * request. Each one's peer is the other process.
 */
static void test_dump_tcp_peers(void **state)
{
	char line[256], port[16], comm[32], path[64], remote[64];
	const struct bp_json *t;
	struct bp_json *dc, *ds;
	struct kthread k;
	pid_t srv, cli, st;
	int out, cout;

	if (!h_need_root())
		skip();
	srv = h_spawn(ARGV(PYTHON, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"), &out);
	assert_true(srv > 0);
	assert_int_equal(h_read_line(out, line, sizeof(line), 30), 0);
	/* "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..." */
	assert_int_equal(sscanf(strstr(line, " port ") ?: "", " port %15s", port), 1);
	snprintf(line, sizeof(line),
		 "import socket, sys\n"
		 "def wait_reply(s):\n"
		 "    return s.recv(1)\n"
		 "s = socket.create_connection(('127.0.0.1', %s))\n"
		 "print('connected', flush=True)\n"
		 "wait_reply(s)\n", port);
	cli = h_spawn(ARGV(PYTHON, "-c", line), &cout);
	assert_true(cli > 0);
	assert_int_equal(h_read_line(cout, line, sizeof(line), 30), 0);
	assert_true(wait_blocked(cli, cli, 45));
	st = blocked_thread(srv, 45);
	if (!st)
		fail_msg("no thread of http.server blocked reading the request");
	dc = dump_json(cli);
	ds = dump_json(srv);

	t = thread_of(dc, cli);
	kernel_view(cli, cli, &k);
	assert_str("client: state", jstr(t, "state"), "sleeping");
	assert_str("client: wait class", jstr(t, "wait_class"), "net");
	assert_int_equal(jint(t, "syscall.nr"), k.sys);
	assert_int_equal(jint(t, "fd.fd"), (int64_t)k.arg0);
	assert_str("client: fd kind", jstr(t, "fd.kind"), "inet");
	snprintf(remote, sizeof(remote), "127.0.0.1:%s", port);
	assert_str("client: remote", jstr(t, "fd.remote"), remote);
	assert_int_equal(jint(t, "peer.pid"), srv);
	snprintf(path, sizeof(path), "/proc/%d/comm", srv);
	read_small(path, comm, sizeof(comm));
	assert_str("client: peer", jstr(t, "peer.comm"), comm);
	assert_python("client", t, "<string>", (const char *const[]){ "wait_reply", "<module>" },
		      (const int[]){ 3, 6 }, 2);

	t = thread_of(ds, st);
	kernel_view(srv, st, &k);
	assert_str("server: state", jstr(t, "state"), "sleeping");
	assert_str("server: wait class", jstr(t, "wait_class"), "net");
	assert_int_equal(jint(t, "syscall.nr"), k.sys);
	assert_int_equal(jint(t, "peer.pid"), cli);
	assert_python("server", t, "socket.py",
		      (const char *const[]){ "SocketIO.readinto",
					     "BaseHTTPRequestHandler.handle_one_request" },
		      (const int[]){ 0, -1 }, 2);
	printf("    client %d waits on %s[%lld], server thread %d on %s[%lld]\n", cli,
	       jstr(thread_of(dc, cli), "peer.comm"), (long long)jint(thread_of(dc, cli), "peer.pid"),
	       st, jstr(t, "peer.comm"), (long long)jint(t, "peer.pid"));
	close(out);
	close(cout);
	bp_json_free(dc);
	bp_json_free(ds);
}

/* each bad input: one line on stderr, a non-zero exit */
static void expect_one_line(char *const argv[], int code, const char *says)
{
	struct run r;

	assert_int_equal(h_run(argv, 60, &r), 0);
	if (r.exit_code != code || h_lines(r.err) != 1 || !strstr(r.err, says) || r.out_len) {
		print_run(argv[2], &r);
		fail_msg("expected exit %d and one line saying '%s'", code, says);
	}
	printf("    %s", r.err);
	h_run_free(&r);
}

static void test_dump_bad_input(void **state)
{
	char pid_s[16], tid_s[16];
	pid_t gone;
	int sv[2];

	if (!h_need_root())
		skip();
	/* a pid no process has: the highest one that is free */
	for (gone = 4194303; gone > 1 && (kill(gone, 0) == 0 || errno != ESRCH); gone--)
		;
	snprintf(pid_s, sizeof(pid_s), "%d", gone);
	expect_one_line(ARGV((char *)h_bin(), "dump", "-p", pid_s), 2, "no process");
	expect_one_line(ARGV((char *)h_bin(), "dump", "-p", "abc"), 2, "-p");
	expect_one_line(ARGV((char *)h_bin(), "dump"), 2, "-p PID");
	expect_one_line(ARGV((char *)h_bin(), "dump", "-p", "1,2"), 2, "one process");
	/* a thread, not a process: which process it is part of */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	{
		pid_t py = spawn_io(ARGV(PYTHON, "-c",
					 "import threading,os,time\n"
					 "def f(): os.write(1, b'%d\\n' % threading.get_native_id());"
					 " time.sleep(100)\n"
					 "threading.Thread(target=f).start()"),
				    -1, sv[1], -1);
		char line[64];

		close(sv[1]);
		assert_int_equal(h_read_line(sv[0], line, sizeof(line), 20), 0);
		snprintf(tid_s, sizeof(tid_s), "%d", atoi(line));
		snprintf(pid_s, sizeof(pid_s), "%d", py);
		expect_one_line(ARGV((char *)h_bin(), "dump", "-p", tid_s), 2, pid_s);
		close(sv[0]);
	}
}

/*
 * A caller without CAP_SYS_PTRACE may not read another user's process,
 * so neither may its dump: root with CAP_SYS_PTRACE dropped from its
 * bounding set, against a `sleep` run as nobody.
 */
static void test_dump_not_permitted(void **state)
{
	char pid_s[16];
	pid_t victim, pid;
	struct run r = { 0 };
	int out[2], err[2];
	char buf[4096], obuf[64];
	ssize_t n, on;
	size_t len;

	if (!h_need_root())
		skip();
	victim = fork();
	assert_true(victim >= 0);
	if (victim == 0) {
		setpgid(0, 0);
		if (setgid(65534) || setuid(65534))
			_exit(126);
		execl("/usr/bin/sleep", "sleep", "1000", (char *)NULL);
		_exit(127);
	}
	h_adopt(victim);
	h_sleep(0.2);
	snprintf(pid_s, sizeof(pid_s), "%d", victim);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		if (prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0))
			_exit(126);
		execl(h_bin(), h_bin(), "dump", "-p", pid_s, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	/* stderr is unbuffered: the line comes in pieces, until the end */
	len = 0;
	while (len < sizeof(buf) - 1 && (n = read(err[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	assert_int_equal(waitpid(pid, &r.status, 0), pid);
	on = read(out[0], obuf, sizeof(obuf));
	close(out[0]);
	close(err[0]);
	printf("    %s", buf);
	assert_true(WIFEXITED(r.status));
	assert_int_not_equal(WEXITSTATUS(r.status), 0);
	assert_int_equal(h_lines(buf), 1);
	assert_non_null(strstr(buf, "not permitted"));
	assert_true(on <= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_dump_python_pipe_socket_spin, teardown),
		cmocka_unit_test_teardown(test_dump_tcp_peers, teardown),
		cmocka_unit_test_teardown(test_dump_bad_input, teardown),
		cmocka_unit_test_teardown(test_dump_not_permitted, teardown),
	};

	return cmocka_run_group_tests_name("dump", tests, NULL, NULL);
}
