#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H
#if defined(__linux__)
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>
#endif
#endif
