// Installs a SIGHUP handler before main runs. The default action of SIGHUP ends the process,
// so a `systemctl reload` (or `kill -HUP`) that arrives while a daemon is still starting would
// kill it. This handler only counts such signals; the daemon's own signal handling
// (UnixSignalsSequence) replaces it later and reloads once for any signal counted here.
#include "CEarlySignals.h"

#if defined(__linux__)
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

// Written by the handler (on whichever thread the signal lands) and read by the daemon's
// threads: lock-free atomics, which are also safe to use in a signal handler.
static atomic_int installed = 0;
static atomic_long count = 0;
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2, "the SIGHUP counter must be lock-free to be used in a signal handler");

static void environments_count_sighup(int signal) {
    (void)signal;
    int saved = errno;  // A handler must leave errno as the interrupted code had it.
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    errno = saved;
}

__attribute__((constructor)) static void environments_install_early_sighup_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = environments_count_sighup;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    struct sigaction previous;
    if (sigaction(SIGHUP, NULL, &previous) == 0 && previous.sa_handler == SIG_IGN) {
        return;  // Respect a parent that asked us to ignore hang-ups (nohup).
    }
    atomic_store(&installed, sigaction(SIGHUP, &action, NULL) == 0);
}

int environments_early_sighup_handler_installed(void) { return atomic_load(&installed); }
long environments_early_sighup_count(void) { return atomic_load_explicit(&count, memory_order_relaxed); }
#else
int environments_early_sighup_handler_installed(void) { return 0; }
long environments_early_sighup_count(void) { return 0; }
#endif
