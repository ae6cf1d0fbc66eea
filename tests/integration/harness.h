/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Integration test harness: run boundprof and fixtures as real processes,
 * capture their output, and clean up whatever they leave even when a test
 * fails.
 */
#ifndef BP_HARNESS_H
#define BP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/json.h"

struct run {
	int status;		/* raw wait status */
	int exit_code;		/* WEXITSTATUS, or 128 + signal */
	bool signaled;
	char *out;		/* captured stdout, NUL-terminated */
	char *err;		/* captured stderr */
	size_t out_len, err_len;
};

/* environment the Makefile passes */
const char *h_bin(void);			/* ./boundprof */
const char *h_fixture(const char *name);	/* path of a fixture binary (static buffer) */

/* a fresh temporary directory for one test, removed by h_cleanup() */
const char *h_tmpdir(void);
/* path inside the test's temporary directory (static rotating buffers) */
const char *h_path(const char *name);

/* run argv to completion (timeout_s: SIGKILL after), capturing output */
int h_run(char *const argv[], double timeout_s, struct run *r);
void h_run_free(struct run *r);

/* start argv in the background with stdout captured on *out_fd (or -1) */
pid_t h_spawn(char *const argv[], int *out_fd);
/* the same, with stderr captured on *err_fd too */
pid_t h_spawn2(char *const argv[], int *out_fd, int *err_fd);
/* read a line from fd within timeout_s; 0 or -ETIMEDOUT */
int h_read_line(int fd, char *buf, size_t len, double timeout_s);
/* wait for a background process (timeout_s, then SIGKILL) and fill r */
int h_wait(pid_t pid, int out_fd, int err_fd, double timeout_s, struct run *r);

/* kill and reap every background process, remove the temporary directory */
void h_cleanup(void);

/* read a whole file (malloc()ed), NULL if missing */
char *h_slurp(const char *path, size_t *len);
/* parse a JSON file; NULL (and a printed reason) on failure */
struct bp_json *h_json_file(const char *path);

/*
 * `boundprof record -o NAME -- COMMAND...` (NAME under the test directory,
 * a .json), which must exit 0; the parsed report, or NULL with the reason
 * (and the run's output) printed.
 */
struct bp_json *h_record_json(const char *name, char *const cmd[]);

/* the process object in a report with this comm, or NULL */
const struct bp_json *h_find_proc(const struct bp_json *report, const char *comm);
/* the "self" fraction of a function among a process's hotspots, or -1 */
double h_hotspot_self(const struct bp_json *proc, const char *function);

/* count lines in a string */
int h_lines(const char *s);

/* cmd is an executable on PATH */
bool h_have(const char *cmd);

/* the rows of `go tool pprof -top` output, after its header */
struct h_top_row {
	char name[128];
	double flat_pct;
};
int h_pprof_top(const char *out, struct h_top_row *rows, int max);

/*
 * One HTTP exchange with 127.0.0.1:port: raw request bytes sent as they are
 * (so that tests can send malformed ones), the answer read until the server
 * closes. *status is the status code (-1: no status line); *body (malloc()ed,
 * NUL-terminated, may be NULL) and *body_len what follows the header. 0 or
 * -errno (-ETIMEDOUT).
 */
int h_http(int port, const char *request, size_t req_len, double timeout_s, int *status,
	   char **body, size_t *body_len);
/* GET path with Connection: close; same results */
int h_http_get(int port, const char *path, double timeout_s, int *status, char **body,
	       size_t *body_len);

/* skip the whole suite (loudly) unless we are root */
bool h_need_root(void);

void h_sleep(double s);

#endif /* BP_HARNESS_H */
