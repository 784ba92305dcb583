import FileDescriptorWriting
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many times the test's signal reached its handler.
private let signalsDelivered = Atomic<Int>(0)

/// `FileDescriptorWriter`: bytes written whole, through short writes and interruptions, and
/// failures reported with the call's `errno`.
@Suite("file descriptor writer")
struct FileDescriptorWriterTests {
    /// A pipe's read and write ends.
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        try #require(pipe(&descriptors) == 0)
        return (descriptors[0], descriptors[1])
    }

    /// Everything `descriptor` gives until end of file, read `chunk` bytes at a time.
    private static func readToEnd(_ descriptor: Int32, chunk: Int) -> [UInt8] {
        Array(TestSupport.readToEnd(FileHandle(fileDescriptor: descriptor, closeOnDealloc: false), chunk: chunk))
    }

    @Test("a reader that takes a little at a time and signals that interrupt the writer: every byte arrives, in order")
    func interruptedAndShortWrites() throws {
        // A handler without SA_RESTART: a blocked write(2) returns early, with what it had
        // written so far or with EINTR.
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { _ in signalsDelivered.add(1, ordering: .relaxed) }
        #else
            action.__sigaction_u.__sa_handler = { _ in signalsDelivered.add(1, ordering: .relaxed) }
        #endif
        action.sa_flags = 0
        sigemptyset(&action.sa_mask)
        var previous = sigaction()
        try #require(sigaction(SIGURG, &action, &previous) == 0)
        defer { sigaction(SIGURG, &previous, nil) }

        let ends = try Self.makePipe()
        defer { close(ends.read) }
        // Several times a pipe's buffer (64 KiB on Linux), in a pattern that shows any byte
        // lost, repeated or moved.
        let payload = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 11)) }
        let writerThread = Mutex<pthread_t?>(nil)
        let outcome = Mutex<Result<Void, POSIXError>?>(nil)
        let writer = Thread {
            // The signal may be blocked in the threads this process starts; not in this one.
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGURG)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            writerThread.withLock { $0 = pthread_self() }
            let result = Result { () throws(POSIXError) in
                try FileDescriptorWriter.writeAll(payload, to: ends.write)
            }
            outcome.withLock { $0 = result }
            close(ends.write)
        }
        writer.start()
        let signalsBefore = signalsDelivered.load(ordering: .relaxed)
        let signaler = Thread {
            while outcome.withLock({ $0 == nil }) {
                if let thread = writerThread.withLock({ $0 }) { pthread_kill(thread, SIGURG) }
                usleep(100)
            }
        }
        signaler.start()

        let received = Self.readToEnd(ends.read, chunk: 997)
        try #require(outcome.withLock { $0 } != nil)
        #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }
        // Compared as a whole and reported by position: a diff of two 4 MiB arrays would take
        // the test runner minutes.
        let firstDifference = zip(received.indices, zip(received, payload)).first { $0.1.0 != $0.1.1 }?.0
        #expect(received.count == payload.count)
        #expect(firstDifference == nil, "the bytes differ from offset \(firstDifference ?? 0) on")
        #expect(signalsDelivered.load(ordering: .relaxed) > signalsBefore)
    }

    @Test("bytes that are not contiguous (a lazy map) are written whole too")
    func nonContiguousBytes() throws {
        let ends = try Self.makePipe()
        defer { close(ends.read) }
        let source = Array(0..<200).map { UInt8($0) }
        try FileDescriptorWriter.writeAll(source.lazy.map { $0 ^ 0x5A }, to: ends.write)
        close(ends.write)
        #expect(Self.readToEnd(ends.read, chunk: 64) == source.map { $0 ^ 0x5A })
    }

    @Test("a descriptor that refuses the bytes: the error is the call's errno, and write(_:to:) says false")
    func refusedWrite() throws {
        let readOnly = open("/dev/null", O_RDONLY)
        try #require(readOnly >= 0)
        defer { close(readOnly) }
        #expect(throws: POSIXError(.EBADF)) {
            try FileDescriptorWriter.writeAll(Array("text".utf8), to: readOnly)
        }
        #expect(!FileDescriptorWriter.write("text", to: readOnly))
        #expect(!FileDescriptorWriter.write("text", to: -1))

        let ends = try Self.makePipe()
        defer { close(ends.read) }
        #expect(FileDescriptorWriter.write("é, 🙂 and\nlines", to: ends.write))
        close(ends.write)
        #expect(String(decoding: Self.readToEnd(ends.read, chunk: 5), as: UTF8.self) == "é, 🙂 and\nlines")
    }

    @Test("nothing to write is a success, and writes nothing")
    func emptyWrite() throws {
        let ends = try Self.makePipe()
        defer { close(ends.read) }
        try FileDescriptorWriter.writeAll([UInt8](), to: ends.write)
        try FileDescriptorWriter.writeAll(Data(), to: ends.write)
        close(ends.write)
        #expect(Self.readToEnd(ends.read, chunk: 16).isEmpty)
    }
}
