import Environments

/// Writes `script` to `path` as an executable (mode 0755), ready to run at once.
///
/// Tests that stand in for a program (`envctl-fleet`, `systemd-creds`) run their script right
/// after writing it, while other tests of the same process start processes of their own. A
/// file written with Foundation's `write(toFile:atomically:)` is open without `O_CLOEXEC`, so a
/// process started meanwhile keeps it open for writing, and running the script then fails with
/// "Text file busy" (ETXTBSY). `AtomicFile` opens its temporary file with `O_CLOEXEC`, writes it
/// whole with the mode given, and renames it into place.
package func writeExecutableScript(_ script: String, to path: String) throws {
    try AtomicFile.replace(path, with: script.utf8, mode: 0o755)
}
