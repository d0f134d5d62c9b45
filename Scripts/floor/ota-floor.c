/*
 * ota-floor: the least durable work a receiver can do for an image, the floor ota-bench compares
 * the device's ingest against.
 *
 *   ota-floor --dir PATH [--size MiB] [--chunk BYTES] [--window KiB]
 *
 * It takes chunks of the same size the device gets from memory, pwrites each to a slot file, and
 * per window fdatasyncs the slot, then writes a 64-byte record in place (alternately at two fixed
 * places) and fdatasyncs it. No protocol, no CRC, no allocation per chunk. It prints one line:
 *
 *   FLOOR chunk=<bytes> cpu_ms_per_mb=<ms> mb_per_s=<MB/s> windows=<n>
 *
 * Built by Scripts/bench-ingest.sh with `cc -O2`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

static double process_cpu(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

static double wall(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

static void fail(const char *what) {
  fprintf(stderr, "ota-floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

int main(int argc, char **argv) {
  long size_mib = 64, chunk = 506, window_kib = 32;
  const char *dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) size_mib = atol(argv[++i]);
    else if (!strcmp(argv[i], "--chunk") && i + 1 < argc) chunk = atol(argv[++i]);
    else if (!strcmp(argv[i], "--window") && i + 1 < argc) window_kib = atol(argv[++i]);
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    else {
      fprintf(stderr, "usage: ota-floor --dir PATH [--size MiB] [--chunk BYTES] [--window KiB]\n");
      return 2;
    }
  }
  if (!dir || size_mib <= 0 || chunk <= 0 || window_kib <= 0) {
    fprintf(stderr, "usage: ota-floor --dir PATH [--size MiB] [--chunk BYTES] [--window KiB]\n");
    return 2;
  }
  size_t size = (size_t)size_mib << 20, window = (size_t)window_kib << 10;
  uint8_t *image = malloc(size);
  if (!image) fail("malloc");
  uint64_t state = 64;
  for (size_t i = 0; i < size; i++) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    image[i] = (uint8_t)(state >> 56);
  }
  char slot_path[4096], record_path[4096];
  snprintf(slot_path, sizeof slot_path, "%s/floor-%d-slot.img", dir, (int)getpid());
  snprintf(record_path, sizeof record_path, "%s/floor-%d-record", dir, (int)getpid());
  int slot = open(slot_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  int record = open(record_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (slot < 0 || record < 0) fail("open");
  if (ftruncate(slot, (off_t)size) != 0 || ftruncate(record, 128) != 0) fail("ftruncate");

  uint8_t entry[64];
  long windows = 0;
  double started_cpu = process_cpu(), started = wall();
  for (size_t offset = 0; offset < size;) {
    size_t window_end = offset + window < size ? offset + window : size;
    while (offset < window_end) {
      size_t count = window_end - offset < (size_t)chunk ? window_end - offset : (size_t)chunk;
      if (pwrite(slot, image + offset, count, (off_t)offset) != (ssize_t)count) fail("pwrite");
      offset += count;
    }
    if (fdatasync(slot) != 0) fail("fdatasync slot");
    memset(entry, 0, sizeof entry);
    memcpy(entry, &windows, sizeof windows);
    memcpy(entry + 8, &offset, sizeof offset);
    if (pwrite(record, entry, sizeof entry, (off_t)(windows % 2) * 64) != (ssize_t)sizeof entry) fail("pwrite record");
    if (fdatasync(record) != 0) fail("fdatasync record");
    windows++;
  }
  double cpu = process_cpu() - started_cpu, elapsed = wall() - started;
  unlink(slot_path);
  unlink(record_path);
  double megabytes = size / 1e6;
  printf("FLOOR chunk=%ld cpu_ms_per_mb=%.2f mb_per_s=%.1f windows=%ld\n", chunk, cpu * 1000 / megabytes,
         megabytes / elapsed, windows);
  return 0;
}
