import Foundation
import Locking
import Logging
import Synchronization
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parent of every suite in this module. Serialized: the tests count open inotify
/// descriptors and wait for events, and running them one at a time keeps that reliable on a
/// loaded machine.
@Suite(.serialized) enum FileWatchingTests {}

/// A failed file operation in a test.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
}

/// How long to wait for an event that should come: a deadline for a failure, not a timing goal
/// (a test that passes returns as soon as the event comes). Generous, because the whole suite
/// runs tests in parallel on two cores, and tests beside these block the concurrency pool's
/// threads while they wait for processes (5 s was seen to pass before a watcher's task ran).
let eventTimeout: Duration = .seconds(30)
/// How long to wait before concluding that no event comes.
let quietPeriod: Duration = .milliseconds(300)

/// A logger for the watchers under test; set `FILE_WATCHING_TRACE=1` to see every event.
let testLogger: Logger = {
    var logger = Logger(label: "FileWatchingTests")
    logger.logLevel = ProcessInfo.processInfo.environment["FILE_WATCHING_TRACE"] == nil ? .info : .trace
    return logger
}()

/// Runs `body` with a fresh temporary directory, removed afterwards.
func withTemporaryDirectory(_ body: (String) async throws -> Void) async throws {
    var template = Array("/tmp/FileWatchingTests.XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { buffer -> String? in
        guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
        return String(cString: result)
    }
    guard let path else { throw TestFailure(description: "mkdtemp failed: errno \(errno)") }
    do {
        try await body(path)
    } catch {
        try? FileManager.default.removeItem(atPath: path)
        throw error
    }
    try? FileManager.default.removeItem(atPath: path)
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes.
func waitUntil(timeout: Duration = eventTimeout, _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// File operations done the way editors and tools do them, with plain system calls.
enum FS {
    private static func check(_ result: Int32, _ operation: String, _ path: String) throws {
        if result != 0 {
            let message = String(cString: strerror(errno))
            throw TestFailure(description: "\(operation)(\(path)) failed: \(message)")
        }
    }

    /// Writes `contents` into `path` in place: `open(O_TRUNC)` (or `O_APPEND`), `write`, `close`.
    static func writeInPlace(_ path: String, _ contents: String, append: Bool = false) throws {
        let flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { try check(-1, "open", path); return }
        defer { close(fd) }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw TestFailure(description: "short write to \(path)") }
    }

    /// Writes a temporary file next to `path` and renames it over `path`.
    static func writeAtomically(_ path: String, _ contents: String) throws {
        let temporary = path + ".tmp\(Int.random(in: 100_000...999_999))"
        try writeInPlace(temporary, contents)
        try move(temporary, to: path)
    }

    /// Renames `source` to `destination`, replacing it.
    static func move(_ source: String, to destination: String) throws {
        try check(rename(source, destination), "rename", source)
    }

    /// Deletes a file or symbolic link.
    static func delete(_ path: String) throws {
        try check(unlink(path), "unlink", path)
    }

    /// Creates a directory.
    static func makeDirectory(_ path: String) throws {
        try check(mkdir(path, 0o755), "mkdir", path)
    }

    /// Deletes an empty directory.
    static func removeDirectory(_ path: String) throws {
        try check(rmdir(path), "rmdir", path)
    }

    /// Creates a symbolic link at `path` pointing to `destination`.
    static func makeSymlink(_ destination: String, at path: String) throws {
        try check(symlink(destination, path), "symlink", path)
    }

    /// Points the symbolic link `path` at `destination` atomically, as `ln -sfn` does.
    static func retarget(_ path: String, to destination: String) throws {
        let temporary = path + ".lnk\(Int.random(in: 100_000...999_999))"
        try makeSymlink(destination, at: temporary)
        try move(temporary, to: path)
    }

    /// Runs a command (for `sed -i` and `ln -sfn`) and waits for it.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure(description: "\(executable) \(arguments) exited \(process.terminationStatus)")
        }
    }
}

#if os(Linux)
    /// A file held open for writing, like one that a program is still saving.
    final class OpenFile {
        private var descriptor: Int32
        private let path: String

        /// Opens `path` for writing and truncates it (`open(O_WRONLY | O_CREAT | O_TRUNC)`).
        init(_ path: String) throws {
            self.path = path
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else {
                throw TestFailure(description: "open(\(path)) failed: \(String(cString: strerror(errno)))")
            }
        }

        deinit { close() }

        /// Appends `contents` with one `write(2)`, leaving the file open.
        func write(_ contents: String) throws {
            let bytes = Array(contents.utf8)
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written == bytes.count else { throw TestFailure(description: "short write to \(path)") }
        }

        /// Closes the file, which completes the save. Calling it again does nothing.
        func close() {
            guard descriptor >= 0 else { return }
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }
#endif

/// Collects the batches a watcher reports, and when they arrived.
final class BatchRecorder: Sendable {
    private let state = Locked<[(batch: FileChangeBatch, arrival: ContinuousClock.Instant)]>([])

    /// Records a batch, arriving now.
    func record(_ batch: FileChangeBatch) {
        let now = ContinuousClock.now
        state.withLock { $0.append((batch, now)) }
    }

    /// Every batch so far.
    var batches: [FileChangeBatch] { state.withLock { $0.map(\.batch) } }

    /// When each batch in ``batches`` arrived.
    var arrivals: [ContinuousClock.Instant] { state.withLock { $0.map(\.arrival) } }

    /// The union of the paths of every batch so far.
    var changedPaths: Set<String> {
        state.withLock { $0.reduce(into: Set<String>()) { $0.formUnion($1.batch.paths) } }
    }

    /// Forgets the batches so far.
    func reset() {
        state.withLock { $0.removeAll() }
    }

    /// Waits until the batches so far mention every path in `paths`.
    func waitForChange(of paths: Set<String>, timeout: Duration = eventTimeout) async -> Bool {
        await waitUntil(timeout: timeout) { paths.isSubset(of: changedPaths) }
    }

    /// Waits ``quietPeriod`` and tells whether no batch arrived meanwhile.
    func staysQuiet(for period: Duration = quietPeriod) async -> Bool {
        let before = batches.count
        try? await Task.sleep(for: period)
        return batches.count == before
    }

    /// Waits for a burst to be reported and for things to settle, then forgets everything.
    func settle() async {
        try? await Task.sleep(for: quietPeriod)
        reset()
    }
}

/// One change a test makes to the files, and whether the watcher must report it.
struct Step {
    /// Whether the watcher must report the change (or stay quiet after it).
    let isReported: Bool
    /// What the step does to the files.
    let change: () throws -> Void

    /// A change that the watcher must report.
    static func reported(_ change: @escaping () throws -> Void) -> Step {
        Step(isReported: true, change: change)
    }

    /// A change that the watcher must not report.
    static func ignored(_ change: @escaping () throws -> Void) -> Step {
        Step(isReported: false, change: change)
    }
}

extension BatchRecorder {
    /// Makes the changes of `steps` one after the other. After a reported change, expects
    /// batches that mention every path in `paths`, and lets that burst settle (and forgets
    /// it) before the next step; after an ignored one, expects no batch for ``quietPeriod``.
    /// The batches of the last step are kept, for the test to look at.
    func expect(
        _ paths: Set<String>, after steps: [Step],
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let location = SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        for (index, step) in steps.enumerated() {
            if index > 0, steps[index - 1].isReported { await settle() }
            try step.change()
            if step.isReported {
                let reported = await waitForChange(of: paths)
                #expect(reported, "step \(index + 1) was not reported", sourceLocation: location)
            } else {
                let quiet = await staysQuiet()
                #expect(quiet, "step \(index + 1) was reported: \(batches)", sourceLocation: location)
            }
        }
    }

    /// ``expect(_:after:fileID:filePath:line:column:)`` with the steps written out.
    func expect(
        _ paths: Set<String>, after steps: Step...,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await expect(paths, after: steps, fileID: fileID, filePath: filePath, line: line, column: column)
    }
}

/// A flag set from another task.
final class Flag: Sendable {
    private let value = Locked(false)
    /// Sets the flag.
    func set() { value.withLock { $0 = true } }
    /// Whether the flag is set.
    var isSet: Bool { value.withLock { $0 } }
}

/// Runs a watcher for the duration of `body`, after its initial watches are in place.
func withWatcher(
    files: [String] = [], directories: [String] = [], debounce: Duration = .milliseconds(50),
    settle: Duration = .milliseconds(2), openWriteLimit: Duration = .seconds(5),
    entryFilter: @escaping @Sendable (String) -> Bool = { _ in true }, backend: FileWatcher.Backend = .native,
    _ body: (BatchRecorder) async throws -> Void
) async throws {
    let watcher = FileWatcher(
        files: files, directories: directories, debounce: debounce, settle: settle,
        openWriteLimit: openWriteLimit, entryFilter: entryFilter, logger: testLogger, backend: backend)
    let recorder = BatchRecorder()
    let ready = Flag()
    let task = Task {
        try await watcher.run(onReady: { ready.set() }, onChange: { recorder.record($0) })
    }
    do {
        guard await waitUntil({ ready.isSet }) else {
            throw TestFailure(description: "the watcher did not become ready")
        }
        try await body(recorder)
    } catch {
        task.cancel()
        _ = try? await task.value
        throw error
    }
    task.cancel()
    try await task.value
}

/// Runs `body` with `Environments.plist`, holding `contents`, in a fresh temporary directory,
/// watched as ``withWatcher(files:directories:debounce:settle:openWriteLimit:entryFilter:backend:_:)``
/// watches it with the other arguments.
func withWatchedFile(
    contents: String = "v1", debounce: Duration = .milliseconds(50), settle: Duration = .milliseconds(2),
    openWriteLimit: Duration = .seconds(5), backend: FileWatcher.Backend = .native,
    _ body: (_ file: String, BatchRecorder) async throws -> Void
) async throws {
    try await withTemporaryDirectory { directory in
        let file = directory + "/Environments.plist"
        try FS.writeInPlace(file, contents)
        try await withWatcher(
            files: [file], debounce: debounce, settle: settle, openWriteLimit: openWriteLimit, backend: backend
        ) { try await body(file, $0) }
    }
}
