#ifndef BLUEOTA_CZLIB_SHIM_H
#define BLUEOTA_CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit2 and inflateInit2 are macros (they pass ZLIB_VERSION and the stream's size): Swift
   cannot call them. These wrappers open a raw stream (windowBits -15: no zlib header, no trailer). */
static inline int blueota_deflate_init_raw(z_streamp stream, int level) {
  return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

static inline int blueota_inflate_init_raw(z_streamp stream) {
  return inflateInit2(stream, -15);
}
#endif
