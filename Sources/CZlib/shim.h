#ifndef BLUEOTA_CZLIB_SHIM_H
#define BLUEOTA_CZLIB_SHIM_H
#include <zlib.h>
#endif
