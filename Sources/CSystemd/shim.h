#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
#if defined(__linux__)
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
/* The C library calls made beside libsystemd's (access, strerror, iovec, EINVAL): the module
   map exports what this header includes, so `import CSystemd` is the one import a file that
   calls libsystemd needs. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#endif
#endif
