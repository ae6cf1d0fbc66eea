// SPDX-License-Identifier: GPL-2.0
/*
 * `boundprof dump -p PID`: each thread of one process as it is now. A
 * sleepable task iterator, run once, writes per thread its state, kernel
 * stack, the user registers it entered the kernel with, a copy of its user
 * stack from the stack pointer up, and what the file its system call names
 * is (for a Unix socket, which socket is the other end). Userspace unwinds
 * and names the frames (agent/collect/dump.c, docs/dump.md).
 *
 * Its own object and skeleton (dump.skel.h), loaded only by `dump`: none of
 * this is verified when recording. iter.s/task needs Linux 5.18 for
 * bpf_copy_from_user_task(), which reads another process's memory and may
 * fault pages in, as ptrace would, where bpf_probe_read_user() could not.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "compat.bpf.h"
#include "dump_rec.h"

#define PF_KTHREAD		0x00200000
#define S_IFMT			00170000
#define S_IFSOCK		0140000
#define S_IFIFO			0010000
#define AF_UNIX			1
#define AF_INET			2
#define AF_INET6		10
#define PAGE			4096

/* the process asked about, set before load */
const volatile __u32 target_tgid;

/* the record being made, with a page of slack the chunked stack copy may touch */
struct dump_scratch {
	struct bp_dump_rec rec;
	__u8 slack[PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dump_scratch);
} dump_scratch SEC(".maps");

/*
 * A thread on a CPU, taken while it runs: a per-thread cpu-clock event
 * userspace opens for each thread the iterator found running fires this,
 * and its registers and stack are then one moment's. One record per thread.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BP_DUMP_SAMPLES);
	__type(key, __u32);
	__type(value, struct bp_dump_rec);
} dump_samples SEC(".maps");

/* the file behind fd in t's table, as an address; 0: none */
static __always_inline __u64 fd_file(struct task_struct *t, __u64 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	__u64 f = 0, arr;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	arr = (__u64)BPF_CORE_READ(fdt, fd);
	if (!arr || bpf_probe_read_kernel(&f, sizeof(f), (void *)(arr + fd * sizeof(f))))
		return 0;
	return f;
}

static __always_inline void fd_facts(struct bp_dump_rec *r, __u64 file)
{
	struct file *f = (struct file *)file;
	struct socket *sock;
	struct sock *sk, *peer;
	__u16 mode;

	mode = BPF_CORE_READ(f, f_inode, i_mode);
	r->flags |= BP_DUMP_FD;
	r->fd_mode = mode;
	r->fd_ino = BPF_CORE_READ(f, f_inode, i_ino);
	r->fd_dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	if ((mode & S_IFMT) == S_IFIFO) {
		r->fd_kind = BP_FD_PIPE;
		return;
	}
	r->fd_kind = BP_FD_OTHER;
	if ((mode & S_IFMT) != S_IFSOCK)
		return;
	sock = (struct socket *)BPF_CORE_READ(f, private_data);
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return;
	r->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (r->family == AF_UNIX) {
		r->fd_kind = BP_FD_UNIX;
		peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
		if (peer)
			r->peer_ino = BPF_CORE_READ(peer, sk_socket, file, f_inode, i_ino);
	} else if (r->family == AF_INET || r->family == AF_INET6) {
		r->fd_kind = BP_FD_INET;
		r->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
		r->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
		/* into the whole destination: the macro reads sizeof(*dst) */
		if (r->family == AF_INET) {
			__u32 a4 = BPF_CORE_READ(sk, __sk_common.skc_daddr);

			__builtin_memcpy(r->raddr, &a4, 4);
		} else {
			BPF_CORE_READ_INTO(&r->raddr, sk, __sk_common.skc_v6_daddr);
		}
	}
}

/* in a sample: only what is resident (bpf_probe_read_user cannot fault pages in) */
static __always_inline void copy_ustack_now(struct dump_scratch *sc, __u64 sp)
{
	__u32 off = 0, n, i;
	long err = 0;

	if (!sp) {
		sc->rec.ustack_len = -22;
		return;
	}
#pragma unroll
	for (i = 0; i < BP_DUMP_USTACK / PAGE + 1; i++) {
		n = i == 0 ? PAGE - (sp & (PAGE - 1)) : PAGE;
		if (off >= BP_DUMP_USTACK)
			break;
		if (n > BP_DUMP_USTACK - off)
			n = BP_DUMP_USTACK - off;
		if (n == 0 || n > PAGE)
			break;
		err = bpf_probe_read_user(sc->rec.ustack + (off & (BP_DUMP_USTACK - 1)), n,
					  (void *)(sp + off));
		if (err)
			break;
		off += n;
	}
	sc->rec.ustack_len = off ? (__s32)off : (__s32)err;
}

/*
 * The user stack from sp up, a page at a time (the first chunk up to the
 * next page boundary), so that a stack whose mapping ends within 16 KiB
 * still gives what lies below its end.
 */
static __always_inline void copy_ustack(struct dump_scratch *sc, struct task_struct *t, __u64 sp)
{
	__u32 off = 0, n, i;
	long err = 0;

	if (!sp) {
		sc->rec.ustack_len = -22;
		return;
	}
#pragma unroll
	for (i = 0; i < BP_DUMP_USTACK / PAGE + 1; i++) {
		n = i == 0 ? PAGE - (sp & (PAGE - 1)) : PAGE;
		if (off >= BP_DUMP_USTACK)
			break;
		if (n > BP_DUMP_USTACK - off)
			n = BP_DUMP_USTACK - off;
		if (n == 0 || n > PAGE)
			break;
		err = bpf_copy_from_user_task(sc->rec.ustack + (off & (BP_DUMP_USTACK - 1)), n,
					      (void *)(sp + off), t, 0);
		if (err)
			break;
		off += n;
	}
	sc->rec.ustack_len = off ? (__s32)off : (__s32)err;
}

SEC("iter.s/task")
int bp_dump_tasks(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct dump_scratch *sc;
	struct bp_dump_rec *r;
	struct pt_regs *regs;
	__u32 zero = 0;
	__u64 file;
	long n;

	if (!t || (__u32)t->tgid != target_tgid)
		return 0;
	sc = bpf_map_lookup_elem(&dump_scratch, &zero);
	if (!sc)
		return 0;
	r = &sc->rec;
	__builtin_memset(r, 0, offsetof(struct bp_dump_rec, kstack));
	r->tgid = t->tgid;
	r->tid = t->pid;
	r->state = bp_task_state(t);
	r->on_cpu = BPF_CORE_READ(t, on_cpu);
	r->in_iowait = BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
	BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
	n = bpf_get_task_stack(t, r->kstack, sizeof(r->kstack), 0);
	r->kstack_len = n;
	if (t->flags & PF_KTHREAD) {
		r->flags |= BP_DUMP_KTHREAD;
		r->ustack_len = 0;
		goto out;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs) {
		r->ustack_len = -14;
		goto out;
	}
	r->flags |= BP_DUMP_REGS;
	r->regs[BP_DR_IP] = BPF_CORE_READ(regs, ip);
	r->regs[BP_DR_SP] = BPF_CORE_READ(regs, sp);
	r->regs[BP_DR_BP] = BPF_CORE_READ(regs, bp);
	r->regs[BP_DR_ORIG_AX] = BPF_CORE_READ(regs, orig_ax);
	r->regs[BP_DR_DI] = BPF_CORE_READ(regs, di);
	r->regs[BP_DR_SI] = BPF_CORE_READ(regs, si);
	r->regs[BP_DR_DX] = BPF_CORE_READ(regs, dx);
	r->regs[BP_DR_FSBASE] = BPF_CORE_READ(t, thread.fsbase);
	/* an fd the system call names: userspace keeps it only for the calls that take one */
	file = fd_file(t, r->regs[BP_DR_DI]);
	if (file)
		fd_facts(r, file);
	copy_ustack(sc, t, r->regs[BP_DR_SP]);
out:
	bpf_seq_write(seq, r, sizeof(*r));
	return 0;
}

SEC("perf_event")
int bp_dump_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dump_scratch *sc;
	struct bp_dump_rec *r;
	struct pt_regs *regs;
	__u32 zero = 0, tid;
	__u64 file;

	if ((__u32)t->tgid != target_tgid || (t->flags & PF_KTHREAD))
		return 0;
	tid = t->pid;
	if (bpf_map_lookup_elem(&dump_samples, &tid))
		return 0;
	sc = bpf_map_lookup_elem(&dump_scratch, &zero);
	if (!sc)
		return 0;
	r = &sc->rec;
	__builtin_memset(r, 0, offsetof(struct bp_dump_rec, kstack));
	r->tgid = t->tgid;
	r->tid = tid;
	r->state = bp_task_state(t);
	r->on_cpu = 1;
	r->flags = BP_DUMP_SAMPLED | BP_DUMP_REGS;
	BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
	/* in user mode the sample's registers are its own; in the kernel, those it entered with */
	/*
	 * User mode: a user address in ip (kernel addresses have the top bit
	 * set). Not cs: its width in pt_regs changed (6.1 a long, 6.18 a u16
	 * in a union), which CO-RE cannot relocate in the context.
	 */
	if ((__s64)ctx->regs.ip >= 0) {
		r->regs[BP_DR_IP] = ctx->regs.ip;
		r->regs[BP_DR_SP] = ctx->regs.sp;
		r->regs[BP_DR_BP] = ctx->regs.bp;
		r->regs[BP_DR_ORIG_AX] = ~0ULL;
		r->kstack_len = 0;
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if (!regs)
			return 0;
		r->regs[BP_DR_IP] = BPF_CORE_READ(regs, ip);
		r->regs[BP_DR_SP] = BPF_CORE_READ(regs, sp);
		r->regs[BP_DR_BP] = BPF_CORE_READ(regs, bp);
		r->regs[BP_DR_ORIG_AX] = BPF_CORE_READ(regs, orig_ax);
		r->regs[BP_DR_DI] = BPF_CORE_READ(regs, di);
		r->regs[BP_DR_SI] = BPF_CORE_READ(regs, si);
		r->regs[BP_DR_DX] = BPF_CORE_READ(regs, dx);
		r->kstack_len = bpf_get_stack(ctx, r->kstack, sizeof(r->kstack), 0);
		file = fd_file(t, r->regs[BP_DR_DI]);
		if (file)
			fd_facts(r, file);
	}
	r->regs[BP_DR_FSBASE] = BPF_CORE_READ(t, thread.fsbase);
	copy_ustack_now(sc, r->regs[BP_DR_SP]);
	bpf_map_update_elem(&dump_samples, &tid, r, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
