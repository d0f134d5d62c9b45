#ifndef BLUEOTA_CZSTD_SHIM_H
#define BLUEOTA_CZSTD_SHIM_H
/* libzstd (Debian's libzstd-dev, 1.5): frames against the running image. The encoder's attached
   raw-content dictionary (ZSTD_createCDict_advanced2, ZSTD_c_forceAttachDict) is in the library's
   experimental section, exported by the shared library Debian ships. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

/* ZSTD_c_forceAttachDict is a macro for an experimental parameter: Swift cannot see it. */
static const ZSTD_cParameter blueota_zstd_c_force_attach_dict = ZSTD_c_forceAttachDict;
#endif
