// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel-side cost of cpu-clock sampling, whichever tool samples: the
 * time CPUs spend in perf_swevent_hrtimer() (bench/hrtcost.bpf.c), which
 * is perf's callchain and ring-buffer copy, or boundprof's BPF program
 * and the timer around it. perf's own figures leave this out; boundprof's
 * BPF run time has only the program's part of it.
 *
 * usage: hrtcost OUT   attach, then append "ns expiries" (sums over the
 *                      CPUs since the attach) to OUT at each SIGUSR1;
 *                      detach and exit at SIGINT or SIGTERM
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "hrtcost.h"
#include "hrtcost.skel.h"

static volatile sig_atomic_t want_read, stop;

static void on_usr1(int sig)
{
	want_read = 1;
}

static void on_stop(int sig)
{
	stop = 1;
}

/* the address of a function of the kernel's, from /proc/kallsyms; 0: none */
static unsigned long long ksym(const char *name)
{
	char line[256], sym[128], type;
	unsigned long long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

static int report(int fd, const char *out)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	unsigned long long ns = 0, n = 0;
	struct hrt_acc *v;
	__u32 zero = 0;
	FILE *f;

	if (ncpu <= 0)
		return -1;
	v = calloc(ncpu, sizeof(*v));
	if (!v || bpf_map_lookup_elem(fd, &zero, v)) {
		free(v);
		return -1;
	}
	for (i = 0; i < ncpu; i++) {
		ns += v[i].ns;
		n += v[i].n;
	}
	free(v);
	f = fopen(out, "a");
	if (!f)
		return -1;
	fprintf(f, "%llu %llu\n", ns, n);
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct hrtcost_bpf *skel;
	unsigned long long fn;
	sigset_t none, held;

	if (argc != 2) {
		fprintf(stderr, "usage: hrtcost OUT\n");
		return 2;
	}
	fn = ksym("perf_swevent_hrtimer");
	if (!fn) {
		fprintf(stderr, "hrtcost: perf_swevent_hrtimer is not in /proc/kallsyms (needs root)\n");
		return 1;
	}
	skel = hrtcost_bpf__open();
	if (!skel) {
		fprintf(stderr, "hrtcost: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->target_fn = fn;
	if (hrtcost_bpf__load(skel) || hrtcost_bpf__attach(skel)) {
		fprintf(stderr, "hrtcost: cannot load or attach to the hrtimer tracepoints: %s\n",
			strerror(errno));
		hrtcost_bpf__destroy(skel);
		return 1;
	}
	/* held until sigsuspend(): a signal between the test and the wait is not lost */
	sigemptyset(&held);
	sigaddset(&held, SIGUSR1);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGTERM);
	sigprocmask(SIG_BLOCK, &held, NULL);
	signal(SIGUSR1, on_usr1);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	/* ready: the caller waits for this line before it measures */
	printf("attached\n");
	fflush(stdout);
	sigemptyset(&none);
	for (;;) {
		/* a read asked for before the stop is still made */
		if (want_read) {
			want_read = 0;
			if (report(bpf_map__fd(skel->maps.acc), argv[1]))
				fprintf(stderr, "hrtcost: cannot read or write the sums\n");
		}
		if (stop)
			break;
		sigsuspend(&none);
	}
	hrtcost_bpf__destroy(skel);
	return 0;
}
