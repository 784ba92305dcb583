import FileDescriptorWriting

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a ``JournalLogHandler`` writes, resolved once from its ``JournalLogHandler/Output``.
enum LogSink: Sendable {
    /// `sd_journal_sendv`.
    case journal
    /// Native-protocol datagrams to a socket.
    case socket(JournalSocketSender)
    /// `<N>`-prefixed lines to a file descriptor.
    case prefixedLines(fileDescriptor: Int32)
    /// Readable lines to a file descriptor; in a file or a pipe (not a terminal), one line per
    /// entry, line feeds escaped, so that a line-by-line reader finds every entry whole.
    case plainLines(fileDescriptor: Int32, oneLinePerEntry: Bool)

    /// The sink for an output; standard error for the text outputs.
    init(_ output: JournalLogHandler.Output) {
        switch output {
        case .journal: self = .journal
        case .socket(let path): self = .socket(JournalSocketSender(path: path))
        case .stderrWithPriorityPrefix:
            self = .prefixedLines(fileDescriptor: FileDescriptorWriter.standardError)
        case .stderrPlain:
            let descriptor = FileDescriptorWriter.standardError
            self = .plainLines(fileDescriptor: descriptor, oneLinePerEntry: isatty(descriptor) == 0)
        }
    }
}
