// SPDX-License-Identifier: GPL-2.0
/*
 * A fixed amount of CPU-bound work on N threads (default: one per online
 * CPU); prints the wall time it took in seconds. usage: cpujob [ITERS_M] [THREADS]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long iters;
static volatile uint64_t sink;

static void *work(void *arg)
{
	uint64_t x = (uintptr_t)arg;
	long i;

	for (i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN), i;
	pthread_t *t = calloc(n, sizeof(*t));
	struct timespec a, b;

	iters = (argc > 1 ? atol(argv[1]) : 2000) * 1000000L;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	free(t);
	return 0;
}
