#ifndef CEARLYSIGNALS_H
#define CEARLYSIGNALS_H

/// Whether the constructor that runs before main installed the early SIGHUP handler
/// (Linux only; 0 elsewhere).
int environments_early_sighup_handler_installed(void);

/// How many SIGHUPs the early handler caught before the daemon's own signal handling
/// replaced it.
long environments_early_sighup_count(void);

#endif
