// SPDX-License-Identifier: GPL-2.0
/* A dump (collect/dump.h) as text or JSON (docs/dump.md): dump_out.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyze/syscalls.h"
#include "collect/dump.h"
#include "export/dump_out.h"
#include "model/profile.h"
#include "model/wait_class.h"
#include "util/buf.h"
#include "util/json.h"

static const char *const site_names[BP_WS__MAX] = {
	NULL, "lock", "pipe-in", "pipe-out", "net-in", "net-out", "accept", "connect", "poll",
};

static const char *site_name(uint8_t s)
{
	return s < BP_WS__MAX ? site_names[s] : NULL;
}

static const char *dir_name(uint8_t d)
{
	return d == BP_DIR_IN ? "input" : d == BP_DIR_OUT ? "output" : NULL;
}

static const char *fd_kind_name(uint8_t k)
{
	static const char *const n[] = { "none", "pipe", "unix", "inet", "file" };

	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "file";
}

static const char *class_name(uint8_t ts)
{
	return bp_kind_name(bp_kind_of_state(ts));
}

static const char *frame_kind(const struct bp_frame *f)
{
	return f->kernel ? "kernel" : f->python ? "python" : "native";
}

/*
 * Names, paths and comms are the process owner's text: shown on a terminal
 * without their control characters (a path may hold a newline, a comm an
 * escape sequence). Rotating buffers: a few per printf.
 */
static const char *c(const char *s)
{
	static char buf[8][4096];
	static int k;
	char *o;
	size_t i;

	if (!s)
		return "";
	k = (k + 1) % 8;
	o = buf[k];
	for (i = 0; s[i] && i < sizeof(buf[k]) - 1; i++)
		o[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	o[i] = '\0';
	return o;
}

/* one frame as the folded outputs name it, with its place */
static void text_frame(struct bp_buf *b, const struct bp_frame *f)
{
	if (f->python) {
		bp_buf_printf(b, "    %s (%s:%" PRIu32 ")\n", f->name ? c(f->name) : "[python]",
		       f->file ? c(f->file) : "?", f->line);
		return;
	}
	if (f->name)
		bp_buf_printf(b, "    %s", c(f->name));
	else
		bp_buf_printf(b, "    %s+0x%" PRIx64, c(f->module), f->offset);
	if (f->kernel)
		bp_buf_printf(b, " [kernel]");
	else if (f->file && f->line)
		bp_buf_printf(b, " (%s:%" PRIu32 ")", c(f->file), f->line);
	else if (f->name)
		bp_buf_printf(b, " (%s)", c(f->module));
	if (f->inlined)
		bp_buf_printf(b, " [inlined]");
	bp_buf_putc(b, '\n');
}

int bp_dump_text(const struct bp_dump *d, struct bp_buf *b)
{
	const struct bp_wait_class *wc;
	const char *s;
	char lbl[64];
	uint32_t i, j;

	bp_buf_printf(b, "Process %u: ", d->pid);
	/* a command line is the process owner's text: no control characters on the terminal */
	for (s = d->cmdline ? d->cmdline : d->comm; *s; s++)
		bp_buf_putc(b, (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
	bp_buf_putc(b, '\n');
	if (d->python[0])
		bp_buf_printf(b, "Python %s\n", d->python);
	for (i = 0; i < d->nr_threads; i++) {
		const struct bp_dump_thread *t = &d->threads[i];

		wc = bp_wclass_of_state(t->wait_class);
		bp_buf_printf(b, "\nThread %u (%s): %s", t->tid, c(t->comm), bp_dump_state_name(t->state));
		if (t->state == BP_DS_ZOMBIE)
			bp_buf_printf(b, " (exited, not yet reaped by its parent)");
		else if (t->state != BP_DS_RUNNING)
			bp_buf_printf(b, ", %s (%s%s)", wc->name, t->gil ? "waiting for the GIL" : wc->threads,
			       t->pending ? ", until what wakes it says otherwise" : "");
		if (t->wait_func)
			bp_buf_printf(b, ", in %s", c(t->wait_func));
		bp_buf_putc(b, '\n');
		if (t->syscall >= 0) {
			bp_buf_printf(b, "  syscall: %s", bp_syscall_label((uint32_t)t->syscall, lbl,
								 sizeof(lbl)));
			if (t->fd >= 0)
				bp_buf_printf(b, " on fd %d (%s)", t->fd, t->fd_path ? c(t->fd_path) :
								 fd_kind_name(t->fd_kind));
			bp_buf_putc(b, '\n');
		}
		if (t->remote)
			bp_buf_printf(b, "  remote: %s\n", t->remote);
		if (t->peer.pid)
			bp_buf_printf(b, "  peer: %s[%u] (its fd %u)%s%s\n", c(t->peer.comm), t->peer.pid,
			       t->peer.fd, dir_name(t->dir) ? ", waiting for its " : "",
			       dir_name(t->dir) ? dir_name(t->dir) : "");
		if (t->stale_regs)
			bp_buf_printf(b, "  (on a CPU: user frames as of its last entry into the kernel)\n");
		for (j = 0; j < t->nr_frames; j++)
			text_frame(b, &d->prof->frames[t->frames[j]]);
		if (t->user_cut)
			bp_buf_printf(b, "    [truncated]\n");
	}
	return b->err;	/* the first allocation that failed on the way */
}

static void json_str_or_null(struct bp_json_w *w, const char *k, const char *s)
{
	bp_json_w_key(w, k);
	if (s)
		bp_json_w_string(w, s);
	else
		bp_json_w_null_val(w);
}

int bp_dump_json(const struct bp_dump *d, struct bp_buf *b)
{
	struct bp_json_w w;
	uint32_t i, j;

	bp_json_w_init(&w, b, true);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "version", 1);
	bp_json_w_kv_uint64(&w, "pid", d->pid);
	bp_json_w_kv_string(&w, "comm", d->comm);
	json_str_or_null(&w, "cmdline", d->cmdline);
	json_str_or_null(&w, "python", d->python[0] ? d->python : NULL);
	bp_json_w_kv_double(&w, "time", (double)d->taken_ns / 1e9);
	bp_json_w_key(&w, "threads");
	bp_json_w_begin_array(&w);
	for (i = 0; i < d->nr_threads; i++) {
		const struct bp_dump_thread *t = &d->threads[i];

		bp_json_w_begin_object(&w);
		bp_json_w_kv_uint64(&w, "tid", t->tid);
		bp_json_w_kv_string(&w, "comm", t->comm);
		bp_json_w_kv_string(&w, "state", bp_dump_state_name(t->state));
		bp_json_w_kv_string(&w, "wait_class", class_name(t->wait_class));
		bp_json_w_kv_bool(&w, "wait_pending", t->pending);
		bp_json_w_kv_bool(&w, "gil", t->gil);
		json_str_or_null(&w, "wait_site", site_name(t->site));
		json_str_or_null(&w, "wait_function", t->wait_func);
		json_str_or_null(&w, "direction", dir_name(t->dir));
		bp_json_w_key(&w, "syscall");
		if (t->syscall >= 0) {
			bp_json_w_begin_object(&w);
			bp_json_w_kv_int64(&w, "nr", t->syscall);
			json_str_or_null(&w, "name", bp_syscall_name((uint32_t)t->syscall));
			bp_json_w_key(&w, "args");
			bp_json_w_begin_array(&w);
			for (j = 0; j < 3; j++)
				bp_json_w_uint64(&w, t->args[j]);
			bp_json_w_end_array(&w);
			bp_json_w_end_object(&w);
		} else {
			bp_json_w_null_val(&w);
		}
		bp_json_w_key(&w, "fd");
		if (t->fd >= 0) {
			bp_json_w_begin_object(&w);
			bp_json_w_kv_int64(&w, "fd", t->fd);
			bp_json_w_kv_string(&w, "kind", fd_kind_name(t->fd_kind));
			json_str_or_null(&w, "path", t->fd_path);
			json_str_or_null(&w, "remote", t->remote);
			bp_json_w_end_object(&w);
		} else {
			bp_json_w_null_val(&w);
		}
		bp_json_w_key(&w, "peer");
		if (t->peer.pid) {
			bp_json_w_begin_object(&w);
			bp_json_w_kv_uint64(&w, "pid", t->peer.pid);
			bp_json_w_kv_string(&w, "comm", t->peer.comm);
			bp_json_w_kv_uint64(&w, "fd", t->peer.fd);
			json_str_or_null(&w, "direction", dir_name(t->dir));
			bp_json_w_end_object(&w);
		} else {
			bp_json_w_null_val(&w);
		}
		bp_json_w_kv_bool(&w, "registers_stale", t->stale_regs);
		bp_json_w_kv_bool(&w, "stack_cut", t->user_cut);
		bp_json_w_key(&w, "frames");
		bp_json_w_begin_array(&w);
		for (j = 0; j < t->nr_frames; j++) {
			const struct bp_frame *f = &d->prof->frames[t->frames[j]];

			bp_json_w_begin_object(&w);
			bp_json_w_kv_string(&w, "kind", frame_kind(f));
			json_str_or_null(&w, "function", f->name);
			bp_json_w_kv_string(&w, "module", f->module);
			bp_json_w_kv_uint64(&w, "offset", f->offset);
			json_str_or_null(&w, "file", f->file);
			bp_json_w_kv_uint64(&w, "line", f->line);
			bp_json_w_kv_bool(&w, "inlined", f->inlined);
			bp_json_w_end_object(&w);
		}
		bp_json_w_end_array(&w);
		bp_json_w_key(&w, "native_frames");
		bp_json_w_begin_array(&w);
		for (j = 0; j < t->nr_native; j++) {
			const struct bp_frame *f = &d->prof->frames[t->native[j]];

			bp_json_w_begin_object(&w);
			json_str_or_null(&w, "function", f->name);
			bp_json_w_kv_string(&w, "module", f->module);
			bp_json_w_kv_uint64(&w, "offset", t->native_at[j]);
			bp_json_w_end_object(&w);
		}
		bp_json_w_end_array(&w);
		bp_json_w_end_object(&w);
	}
	bp_json_w_end_array(&w);
	bp_json_w_end_object(&w);
	return bp_json_w_finish(&w);
}

int bp_dump_write(const struct bp_dump *d, bool json, struct bp_buf *b)
{
	int err = json ? bp_dump_json(d, b) : bp_dump_text(d, b);

	return err ? err : json ? bp_buf_putc(b, '\n') : 0;
}
