import TestSupport
import Testing

/// Tests that change process environment variables (`NOTIFY_SOCKET`, `WATCHDOG_USEC`,
/// `JOURNAL_STREAM`, ...). They run one at a time, nested suites included, and restore
/// every variable they change.
@Suite(.serialized, .blocking)
struct EnvironmentSensitiveTests {}
