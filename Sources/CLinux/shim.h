#ifndef BLUEOTA_CLINUX_SHIM_H
#define BLUEOTA_CLINUX_SHIM_H
/* Linux interfaces Swift's Glibc module leaves out: signalfd, to stop a poll loop on SIGTERM. */
#include <signal.h>
#include <sys/signalfd.h>
#endif
