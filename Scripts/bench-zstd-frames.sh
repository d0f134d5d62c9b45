#!/usr/bin/env bash
# A design study for issue 29's next step (a zstd operation): what zstd's --patch-from costs when
# its output is cut into independent frames, each decodable on its own against the running image,
# as a resumable transfer needs. libzstd 1.5 directly (the CLI cannot cut frames): one CDict of the
# old image (windowLog 27, attached, never copied), then the new image in frames of each given size,
# optionally flushed every F KiB inside a frame (block boundaries where windows could end).
# Prints the bytes per frame size beside the whole-stream CLI figure's ratio (pass it with --whole).
#
#   Scripts/bench-zstd-frames.sh [--pair DIR] [--level N] [--flush KiB] [--whole BYTES] FRAME_KIB...
#
# Needs gcc and libzstd-dev (not the test suite's): apt-get install gcc libzstd-dev.
set -euo pipefail
pair=/tmp/distro-pair
level=19
flush=0
whole=""
while (($#)); do
  case "$1" in
    --pair) pair="$2"; shift 2 ;;
    --level) level="$2"; shift 2 ;;
    --flush) flush="$2"; shift 2 ;;
    --whole) whole="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench-zstd-frames: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
(($#)) || set -- 64 256 1024 4096
[[ -s "$pair/old.ext4" && -s "$pair/new.ext4" ]] || {
  echo "bench-zstd-frames: no $pair/old.ext4 and new.ext4: make them with Scripts/bench-delta.sh --pairs distro --export $pair --anchors-only" >&2
  exit 2
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/frames.c" <<'C'
#define ZSTD_STATIC_LINKING_ONLY
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zstd.h>

static unsigned char *slurp(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file) { perror(path); exit(2); }
  fseek(file, 0, SEEK_END);
  *size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  unsigned char *bytes = malloc(*size);
  if (fread(bytes, 1, *size, file) != *size) { perror(path); exit(2); }
  fclose(file);
  return bytes;
}

static double seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void check(size_t result) {
  if (ZSTD_isError(result)) { fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(result)); exit(1); }
}

int main(int argc, char **argv) {
  size_t oldSize, newSize;
  unsigned char *old = slurp(argv[1], &oldSize), *new = slurp(argv[2], &newSize);
  int level = atoi(argv[3]);
  size_t flush = (size_t)atol(argv[4]) * 1024;
  double started = seconds();
  ZSTD_CCtx_params *params = ZSTD_createCCtxParams();
  ZSTD_CCtxParams_init(params, level);
  ZSTD_CCtxParams_setParameter(params, ZSTD_c_windowLog, 27);
  ZSTD_CCtxParams_setParameter(params, ZSTD_c_forceAttachDict, ZSTD_dictForceAttach);
  ZSTD_CDict *dictionary =
    ZSTD_createCDict_advanced2(old, oldSize, ZSTD_dlm_byRef, ZSTD_dct_rawContent, params, ZSTD_defaultCMem);
  printf("  CDict of the old image at level %d: %.1f s\n", level, seconds() - started);
  size_t capacity = ZSTD_compressBound(newSize);
  unsigned char *out = malloc(capacity);
  ZSTD_CCtx *context = ZSTD_createCCtx();
  for (int argument = 5; argument < argc; argument++) {
    size_t frame = (size_t)atol(argv[argument]) * 1024, total = 0, frames = 0, largest = 0;
    started = seconds();
    for (size_t start = 0; start < newSize; start += frame, frames++) {
      size_t length = newSize - start < frame ? newSize - start : frame, before = total;
      ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters);
      check(ZSTD_CCtx_refCDict(context, dictionary));
      // The context's own parameters: left to the CDict's, a frame above 256 KiB gets the level's
      // default window (8 MiB at 19) and loses the far half of the old image.
      check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level));
      check(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, 27));
      check(ZSTD_CCtx_setParameter(context, ZSTD_c_forceAttachDict, ZSTD_dictForceAttach));
      check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0));
      check(ZSTD_CCtx_setParameter(context, ZSTD_c_dictIDFlag, 0));
      check(ZSTD_CCtx_setPledgedSrcSize(context, length));
      for (size_t done = 0; done < length;) {
        size_t piece = flush && length - done > flush ? flush : length - done;
        ZSTD_inBuffer input = {new + start + done, piece, 0};
        ZSTD_EndDirective directive = done + piece == length ? ZSTD_e_end : ZSTD_e_flush;
        size_t left;
        do {
          ZSTD_outBuffer output = {out + total, capacity - total, 0};
          left = ZSTD_compressStream2(context, &output, &input, directive);
          check(left);
          total += output.pos;
        } while (left != 0);
        done += piece;
      }
      if (total - before > largest) largest = total - before;
    }
    printf("%zu %zu %zu %.1f\n", frame / 1024, total, largest, seconds() - started);
    fflush(stdout);
  }
  return 0;
}
C
gcc -O2 -o "$work/frames" "$work/frames.c" -lzstd
echo "== $pair: old.ext4 → new.ext4, level $level, $( ((flush)) && echo "flushed every $flush KiB" || echo "no flush inside a frame")"
"$work/frames" "$pair/old.ext4" "$pair/new.ext4" "$level" "$flush" "$@" | while read -r first rest; do
  if [[ "$first" == "CDict" || -z "$rest" ]] || ! [[ "$first" =~ ^[0-9]+$ ]]; then echo "$first $rest"; continue; fi
  read -r bytes largest took <<<"$rest"
  ratio=""
  [[ -z "$whole" ]] || ratio=", $(echo "scale=3; $bytes / $whole" | bc)× the whole stream"
  echo "  frames of $first KiB: $bytes B (largest frame $largest B) in $took s$ratio"
done
