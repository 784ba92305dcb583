import FileDescriptorWriting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension JournalLogHandler {
    /// Where a ``JournalLogHandler`` writes its entries.
    public enum Output: Sendable, Hashable {
        /// Structured entries to the systemd journal through `sd_journal_sendv`. If an entry
        /// cannot be delivered, it is written to standard error with a `<N>` prefix instead.
        case journal
        /// Structured entries in journald's native protocol, one datagram each, to the unix
        /// datagram socket at the given path (see `JournalSocketSender`). If an entry cannot
        /// be delivered, it is written to standard error with a `<N>` prefix instead.
        case socket(String)
        /// Lines `<N>message key=value` on standard error, where `N` is the syslog priority;
        /// journald and syslog read the priority from the prefix. One entry is one line, at most
        /// 32 KiB (cut with a marker past that, below journald's `LineMax=`): control characters,
        /// line feeds and NUL included, are escaped as Swift writes them (`\n`, `\0`,
        /// `\u{1B}`), and a `<N>` inside the text is written `\u{3C}N>`, so no text can start a
        /// journal record of its own.
        case stderrWithPriorityPrefix
        /// Readable lines with timestamp, level, label, message and metadata on standard
        /// error, for a terminal: a multi-line message's continuation lines are indented, and
        /// every other control character is escaped.
        case stderrPlain

        /// The best output for how this process was started.
        ///
        /// - ``journal`` when `JOURNAL_STREAM=device:inode` matches standard error (systemd
        ///   connected standard error to the journal, so structured entries are better);
        /// - ``stderrPlain`` otherwise: on a terminal, and in a file or a pipe (a daemon run by
        ///   hand with `2>daemon.log`, or a unit's `StandardError=file:`), where a line needs its
        ///   timestamp and a `<N>` prefix would mean nothing to the reader.
        ///
        /// ``stderrWithPriorityPrefix`` is for a standard error that something parses as syslog
        /// does; choose it explicitly.
        public static func automatic() -> Output {
            automatic(standardError: FileDescriptorWriter.standardError)
        }

        /// ``automatic()`` for a given descriptor in place of standard error.
        static func automatic(standardError descriptor: Int32) -> Output {
            isJournalStream(descriptor) ? .journal : .stderrPlain
        }

        /// Whether `JOURNAL_STREAM` names the file `descriptor` refers to.
        static func isJournalStream(_ descriptor: Int32) -> Bool {
            guard let value = getenv("JOURNAL_STREAM") else { return false }
            let parts = String(cString: value).split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else {
                return false
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { return false }
            return UInt64(truncatingIfNeeded: status.st_dev) == device
                && UInt64(truncatingIfNeeded: status.st_ino) == inode
        }
    }
}
