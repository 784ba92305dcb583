/// Where a ``JournalLogHandler`` writes, resolved once from its ``JournalLogHandler/Output``.
enum LogSink: Sendable {
    /// `sd_journal_sendv`.
    case journal
    /// Native-protocol datagrams to a socket.
    case socket(JournalSocketSender)
    /// `<N>`-prefixed lines to a file descriptor.
    case prefixedLines(fileDescriptor: Int32)
    /// Readable lines to a file descriptor.
    case plainLines(fileDescriptor: Int32)

    /// The sink for an output; standard error for the text outputs.
    init(_ output: JournalLogHandler.Output) {
        switch output {
        case .journal: self = .journal
        case .socket(let path): self = .socket(JournalSocketSender(path: path))
        case .stderrWithPriorityPrefix:
            self = .prefixedLines(fileDescriptor: FileDescriptorWriter.standardError)
        case .stderrPlain: self = .plainLines(fileDescriptor: FileDescriptorWriter.standardError)
        }
    }
}
