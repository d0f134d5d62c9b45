#ifndef BLUEOTA_CLINUX_SHIM_H
#define BLUEOTA_CLINUX_SHIM_H
/* Linux interfaces Swift's Glibc module leaves out: signalfd, to stop a poll loop on SIGTERM, and
   pidfd_open, to wait for a child process in the same poll loop. */
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* pidfd_open(2) (Linux 5.3): a descriptor that polls readable when the process exits. syscall(2) is
   variadic, which Swift cannot call. */
static inline int clinux_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }
#endif
