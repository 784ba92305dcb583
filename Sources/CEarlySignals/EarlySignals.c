// Installs a SIGHUP handler before main runs. The default action of SIGHUP ends the process,
// so a `systemctl reload` (or `kill -HUP`) that arrives while a daemon is still starting would
// kill it. This handler only counts such signals; the daemon's own signal handling
// (UnixSignalsSequence) replaces it later and reloads once for any signal counted here.
#include "CEarlySignals.h"

#if defined(__linux__)
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t installed = 0;
static volatile sig_atomic_t count = 0;

static void environments_count_sighup(int signal) {
    (void)signal;
    count++;
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
    installed = sigaction(SIGHUP, &action, NULL) == 0;
}

int environments_early_sighup_handler_installed(void) { return installed; }
long environments_early_sighup_count(void) { return count; }
#else
int environments_early_sighup_handler_installed(void) { return 0; }
long environments_early_sighup_count(void) { return 0; }
#endif
