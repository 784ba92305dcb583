import Environments
import EnvironmentsControl
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The control socket's server: one thread that accepts, reads, writes and enforces the
/// limits with `poll(2)`, and handlers that run as tasks, so that neither readers of the
/// configuration nor reloads ever wait on a client.
///
/// Each connection handles one call at a time, in order; calls that arrive meanwhile wait in
/// a short queue. Everything a client can make the server hold is bounded: the size of a
/// call, the calls queued, the unsent reply bytes, the number of connections, and the time a
/// connection may sit idle.
final class ControlServer: Sendable {
    private final class Connection {
        let descriptor: Int32
        let peer: PeerCredentials
        var framer: VarlinkFramer
        var queued: [[UInt8]] = []
        var output: [UInt8] = []
        var outputOffset = 0
        var busy = false
        var closing = false
        /// The peer hung up or the socket failed: nothing more can be read or written.
        var gone = false
        var lastActivity = ContinuousClock.now

        init(descriptor: Int32, peer: PeerCredentials, maximumMessageSize: Int) {
            self.descriptor = descriptor
            self.peer = peer
            self.framer = VarlinkFramer(maximumMessageSize: maximumMessageSize)
        }

        var unsentCount: Int { output.count - outputOffset }
    }

    /// Calls waiting behind the one in progress on a connection.
    private static let maximumQueuedCalls = 16

    let path: String
    private let configuration: ControlSocketConfiguration
    private let handler: ControlHandler
    private let logger: Logger
    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// Replies finished by handler tasks: connection id and the encoded reply (nil: none).
    private let finished = Locked<[(UInt64, [UInt8]?)]>([])
    private let stopped = Atomic<Bool>(false)
    private let done = Locked<CheckedContinuation<Void, Never>?>(nil)
    private let exited = Atomic<Bool>(false)
    /// Whether ``run()`` started serving (which then closes the listener and removes the socket).
    private let served = Atomic<Bool>(false)

    /// Binds the socket (replacing a stale one left by a crash). Call ``run()`` to serve.
    init(configuration: ControlSocketConfiguration, path: String, handler: ControlHandler, logger: Logger) throws {
        self.path = path
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        listener = try Self.bind(path)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0, pipeEnds.allSatisfy(Self.makeNonBlockingAndCloseOnExec) else {
            let code = errno
            close(listener)
            unlink(path)
            throw ControlServerError("cannot create a pipe: \(UnixSocket.describe(code))")
        }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
    }

    deinit {
        // Here, not when serving ends: a handler still running may wake the thread after that.
        close(wakeRead)
        close(wakeWrite)
        if !served.load(ordering: .acquiring) {
            close(listener)
            unlink(path)
        }
    }

    /// Serves until the task is cancelled, then closes every connection and removes the socket.
    func run() async {
        served.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            serve()
            exited.store(true, ordering: .releasing)
            done.withLock { $0.take() }?.resume()
        }
        thread.name = "control-socket"
        thread.start()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = done.withLock { stored -> Bool in
                    if exited.load(ordering: .acquiring) { return true }
                    stored = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            stop()
        }
    }

    /// Asks the server thread to end.
    func stop() {
        stopped.store(true, ordering: .releasing)
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    // MARK: - The server thread

    private func serve() {
        var connections: [UInt64: Connection] = [:]
        var nextIdentifier: UInt64 = 0
        defer {
            for connection in connections.values { close(connection.descriptor) }
            close(listener)
            unlink(path)
            logger.debug("control socket closed", metadata: ["path": "\(path)"])
        }
        while !stopped.load(ordering: .acquiring) {
            // A connection whose peer is gone waits, unpolled, for its call in progress to end.
            let order = connections.keys.filter { !connections[$0]!.gone }
            var entries = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            for identifier in order {
                let connection = connections[identifier]!
                var events: Int16 = 0
                if !connection.closing && connection.queued.count < Self.maximumQueuedCalls { events |= Int16(POLLIN) }
                if connection.unsentCount > 0 { events |= Int16(POLLOUT) }
                entries.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
            }
            let timeout = pollTimeout(connections.values)
            let ready = poll(&entries, nfds_t(entries.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("control socket: poll failed", metadata: ["error": "\(UnixSocket.describe(errno))"])
                return
            }
            if entries[1].revents != 0 { drainWakeups() }
            for (identifier, reply) in finished.withLock({ list in
                defer { list = [] }; return list
            }) {
                guard let connection = connections[identifier] else { continue }
                connection.busy = false
                connection.lastActivity = .now
                if let reply { connection.output += reply }
            }
            for (index, identifier) in order.enumerated() {
                guard let connection = connections[identifier] else { continue }
                let revents = entries[index + 2].revents
                if revents & Int16(POLLIN) != 0 { readAvailable(connection) }
                if revents & (Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)) != 0, revents & Int16(POLLIN) == 0 {
                    connection.closing = true
                    connection.gone = true
                    connection.queued = []
                    connection.output = []
                    connection.outputOffset = 0
                }
            }
            if entries[0].revents & Int16(POLLIN) != 0 {
                acceptAll(into: &connections, nextIdentifier: &nextIdentifier)
            }
            let now = ContinuousClock.now
            for (identifier, connection) in connections {
                dispatch(connection, identifier: identifier)
                if connection.unsentCount > 0 { flush(connection) }
                if connection.unsentCount > configuration.maximumUnsentBytes {
                    logger.warning(
                        "control socket: a client does not read its replies; closing it",
                        metadata: ["peer": "\(connection.peer)"])
                    connection.closing = true
                    connection.output = []
                    connection.outputOffset = 0
                }
                let idle = !connection.busy && now - connection.lastActivity > configuration.idleTimeout
                if idle && !connection.closing {
                    logger.debug("control socket: closing an idle connection", metadata: ["peer": "\(connection.peer)"])
                }
                if (connection.closing && connection.unsentCount == 0 && !connection.busy) || idle {
                    close(connection.descriptor)
                    connections[identifier] = nil
                }
            }
        }
    }

    private func pollTimeout(_ connections: Dictionary<UInt64, Connection>.Values) -> Int32 {
        var earliest: ContinuousClock.Instant?
        for connection in connections where !connection.busy {
            let deadline = connection.lastActivity + configuration.idleTimeout
            if earliest == nil || deadline < earliest! { earliest = deadline }
        }
        guard let earliest else { return -1 }
        return UnixSocket.millisecondsLeft(until: earliest)
    }

    private func drainWakeups() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
    }

    private func acceptAll(into connections: inout [UInt64: Connection], nextIdentifier: inout UInt64) {
        while true {
            let descriptor = accept(listener, nil, nil)
            if descriptor < 0 { return }  // EAGAIN: nothing more to accept; anything else: try on the next wakeup.
            guard Self.makeNonBlockingAndCloseOnExec(descriptor) else {
                close(descriptor)
                continue
            }
            guard connections.count < configuration.maximumConnections else {
                logger.warning(
                    "control socket: too many connections, refusing one",
                    metadata: ["limit": "\(configuration.maximumConnections)"])
                close(descriptor)
                continue
            }
            guard let peer = PeerCredentials.of(descriptor) else {
                close(descriptor)
                continue
            }
            nextIdentifier += 1
            connections[nextIdentifier] = Connection(
                descriptor: descriptor, peer: peer, maximumMessageSize: configuration.maximumMessageSize)
        }
    }

    private func readAvailable(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let count = buffer.withUnsafeMutableBytes { read(connection.descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            connection.closing = true
            connection.gone = true
            return
        }
        if count == 0 {
            // The client is done sending; answer what it asked, then close.
            connection.closing = true
            return
        }
        connection.lastActivity = .now
        for frame in connection.framer.append(buffer[..<count]) {
            switch frame {
            case .message(let bytes):
                connection.queued.append(bytes)
                if connection.queued.count > Self.maximumQueuedCalls {
                    refuse(connection, "more than \(Self.maximumQueuedCalls) calls waiting on one connection")
                    return
                }
            case .tooLarge:
                refuse(connection, "a call larger than \(configuration.maximumMessageSize) bytes")
                return
            }
        }
    }

    /// Answers a protocol violation with an error, then closes the connection.
    private func refuse(_ connection: Connection, _ reason: String) {
        logger.warning("control socket: \(reason); closing the connection", metadata: ["peer": "\(connection.peer)"])
        connection.queued = []
        connection.closing = true
        connection.output += Self.encode(.error(ControlInterface.Error.invalidMessage, ["reason": .string(reason)]))
    }

    /// Starts the next queued call on a connection that has none in progress.
    private func dispatch(_ connection: Connection, identifier: UInt64) {
        guard !connection.busy, !connection.queued.isEmpty else { return }
        let bytes = connection.queued.removeFirst()
        let call: VarlinkCall
        do {
            call = try VarlinkCoding.decode(VarlinkCall.self, from: bytes)
        } catch {
            refuse(connection, "a message that is not a varlink call")
            return
        }
        connection.busy = true
        let peer = connection.peer
        let handler = self.handler
        logger.debug("control socket: call", metadata: ["method": "\(call.method)", "peer": "\(peer)"])
        Task { [self] in
            let reply = await handler.handle(call, from: peer)
            let bytes = call.oneway == true ? nil : Self.encode(reply)
            finished.withLock { $0.append((identifier, bytes)) }
            wake()
        }
    }

    private func flush(_ connection: Connection) {
        while connection.unsentCount > 0 {
            let written = connection.output[connection.outputOffset...].withUnsafeBytes { buffer in
                send(connection.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN {
                    connection.closing = true
                    connection.gone = true
                    connection.output = []
                    connection.outputOffset = 0
                }
                return
            }
            connection.outputOffset += written
        }
        connection.output = []
        connection.outputOffset = 0
    }

    /// Sets `O_NONBLOCK` and `FD_CLOEXEC` (Glibc's Swift module has no `accept4` or `pipe2`).
    private static func makeNonBlockingAndCloseOnExec(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        return flags >= 0 && fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0
            && fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0
    }

    private static func encode(_ reply: VarlinkReply) -> [UInt8] {
        (try? VarlinkCoding.encode(reply)) ?? Array("{\"error\":\"\(ControlInterface.Error.invalidMessage)\"}\0".utf8)
    }

    // MARK: - Binding

    /// A listening socket at `path`. A socket file left by a crashed daemon (nobody accepts
    /// on it) is replaced; a live one, or any other kind of file, is an error.
    private static func bind(_ path: String) throws -> Int32 {
        guard let address = UnixSocket.address(path) else {
            throw ControlServerError("'\(path)' is too long for a unix socket path")
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw ControlServerError("\(path) exists and is not a socket; remove it")
            }
            let probe = UnixSocket.makeStreamSocket()
            defer { close(probe) }
            if UnixSocket.connect(probe, to: address) == 0 {
                throw ControlServerError("another process already serves \(path)")
            }
            unlink(path)  // Stale: left by a daemon that did not stop cleanly.
        }
        let descriptor = UnixSocket.makeStreamSocket()
        guard descriptor >= 0 else { throw ControlServerError("cannot create a socket: \(UnixSocket.describe(errno))") }
        var bound = address
        let result = withUnsafePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw ControlServerError("cannot bind \(path): \(UnixSocket.describe(code))")
        }
        // Anyone who can reach the directory may connect; each call checks who is asking.
        chmod(path, 0o666)
        guard listen(descriptor, 64) == 0, fcntl(descriptor, F_SETFL, O_NONBLOCK) == 0 else {
            let code = errno
            close(descriptor)
            unlink(path)
            throw ControlServerError("cannot listen on \(path): \(UnixSocket.describe(code))")
        }
        return descriptor
    }
}

/// Why the control socket could not be served.
struct ControlServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
