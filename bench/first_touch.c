// How fast this machine backs fresh memory: one byte written per 4 KiB page
// of a new anonymous mapping (advised for transparent huge pages, as the
// worker's slab is), on T threads, each its own part. On a VM whose host
// backs guest memory on first use, the first pass after boot is far slower
// than later ones (docs/history.md, "On 16 cores, measured").
//
//   cc -O2 -pthread bench/first_touch.c -o first_touch
//   ./first_touch GIB THREADS [HUGE=1]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static size_t bytes;
static char *base;
static int threads;

static void *touch(void *arg) {
  long part = (long)arg;
  size_t per = bytes / threads;
  for (size_t at = part * per; at < (part + 1) * per; at += 4096) base[at] = 1;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s GIB THREADS [HUGE=1]\n", argv[0]);
    return 2;
  }
  bytes = (size_t)atol(argv[1]) << 30;
  threads = atoi(argv[2]);
  int huge = argc > 3 ? atoi(argv[3]) : 1;
  if (threads < 1 || threads > 256 || bytes == 0) {
    fprintf(stderr, "GIB and THREADS (1-256) must be positive\n");
    return 2;
  }
  base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  if (huge) madvise(base, bytes, MADV_HUGEPAGE);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  pthread_t id[256];
  for (long i = 0; i < threads; i++) pthread_create(&id[i], NULL, touch, (void *)i);
  for (int i = 0; i < threads; i++) pthread_join(id[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &end);
  double s = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
  printf("%zu GiB %d threads huge=%d: %.2f s, %.2f GB/s\n", bytes >> 30, threads, huge, s, bytes / s / 1e9);
  return 0;
}
