import Environments
import EnvironmentsControl
import JSONText
import Locking
import Logging
import Synchronization
import ThreadBridge
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
/// call, the calls queued, the reply bytes made ahead of the client's reading (a long
/// `Describe` is made one part at a time as the client takes them), the number of
/// connections (in all, per unprivileged user, and some kept for root and the daemon's user),
/// how long a call may take to arrive, and the time a connection may sit without a complete
/// call. Warnings about misbehaving clients are rate-limited.
final class ControlServer: Sendable {
    private final class Connection {
        let descriptor: Int32
        let peer: PeerCredentials
        let isPrivileged: Bool
        var framer: VarlinkFramer
        var queued: [[UInt8]] = []
        var queuedBytes = 0
        var output: [UInt8] = []
        var outputOffset = 0
        /// The rest of a `Describe` with `more`, made as the client reads.
        var parts: DescribeParts?
        /// A handler task is answering a call.
        var busy = false
        var closing = false
        /// A protocol violation was answered: replies still to come are dropped.
        var refused = false
        /// The peer hung up or the socket failed: nothing more can be read or written.
        var gone = false
        /// The last complete call, or reply read whole by the client: the idle time counts from here.
        var lastProgress = ContinuousClock.now
        /// When the first byte of a call not yet complete arrived.
        var partialSince: ContinuousClock.Instant?

        init(descriptor: Int32, peer: PeerCredentials, maximumMessageSize: Int) {
            self.descriptor = descriptor
            self.peer = peer
            self.isPrivileged = peer.isPrivileged
            self.framer = VarlinkFramer(maximumMessageSize: maximumMessageSize)
        }

        var unsentCount: Int { output.count - outputOffset }
        /// Whether a call is in progress or its reply not yet all made.
        var working: Bool { busy || parts != nil }
    }

    /// Calls waiting behind the one in progress on a connection.
    private static let maximumQueuedCalls = 16
    /// Replies made ahead of what the client has read: the next is made only below this.
    private static let outputLowWater = 64 << 10
    /// Connections accepted in one turn of the loop, so that a flood of them cannot starve the rest.
    private static let maximumAcceptsPerTurn = 64
    /// Parts of a `Describe` made for one connection in one turn of the loop, so that clients
    /// reading long answers cannot keep the loop from the others for long.
    private static let maximumPartsPerTurn = 2

    let path: String
    private let configuration: ControlSocketConfiguration
    private let handler: ControlHandler
    private let logger: Logger
    private let listener: Int32
    /// Wakes the server thread from `poll(2)`: a stop, an answer a handler task finished.
    private let wakeup: WakeupPipe
    /// Answers finished by handler tasks: connection id and the answer (nil: none, for oneway).
    private let finished = Locked<[(UInt64, ControlHandler.Answer?)]>([])
    private let stopped = Atomic<Bool>(false)
    /// Whether ``run()`` started serving (which then closes the listener and removes the socket).
    private let served = Atomic<Bool>(false)

    /// Binds the socket (replacing a stale one left by a crash). Call ``run()`` to serve.
    init(configuration: ControlSocketConfiguration, path: String, handler: ControlHandler, logger: Logger) throws {
        self.path = path
        self.configuration = configuration
        var handler = handler
        handler.maximumUnpagedReplySize = configuration.maximumUnpagedReplySize
        handler.partSize = configuration.describePartSize
        self.handler = handler
        self.logger = logger
        listener = try Self.bind(path)
        do {
            wakeup = try WakeupPipe()
        } catch {
            close(listener)
            unlink(path)
            throw ControlServerError("\(error)")
        }
    }

    deinit {
        // The wake-up pipe closes with this object, not when serving ends: a handler still
        // running may wake the thread after that.
        if !served.load(ordering: .acquiring) {
            close(listener)
            unlink(path)
        }
    }

    /// Serves until the task is cancelled, then closes every connection and removes the socket.
    func run() async {
        served.store(true, ordering: .releasing)
        await DedicatedThread.run(named: "control-socket", onCancel: { [self] in stop() }) { [self] in
            Loop(server: self).serve()
        }
    }

    /// Asks the server thread to end.
    func stop() {
        stopped.store(true, ordering: .releasing)
        wake()
    }

    private func wake() {
        wakeup.signal()
    }

    // MARK: - The server thread

    /// What the server thread owns: the connections and the log limiters.
    private final class Loop {
        let server: ControlServer
        var configuration: ControlSocketConfiguration { server.configuration }
        var logger: Logger { server.logger }
        var connections: [UInt64: Connection] = [:]
        var nextIdentifier: UInt64 = 0
        /// Warnings about clients, and debug lines about them (kept apart so that neither
        /// crowds out the other).
        var warnings: LogRateLimiter
        var debugLines: LogRateLimiter

        init(server: ControlServer) {
            self.server = server
            warnings = LogRateLimiter(
                burst: server.configuration.clientWarningBurst, interval: server.configuration.clientWarningInterval)
            debugLines = LogRateLimiter(
                burst: server.configuration.clientWarningBurst, interval: server.configuration.clientWarningInterval)
        }

        func serve() {
            defer { shutDown() }
            while !server.stopped.load(ordering: .acquiring) {
                // A connection whose peer is gone waits, unpolled, for its call in progress to end.
                let order = connections.keys.filter { connections[$0].map { !$0.gone } ?? false }
                var entries = pollEntries(for: order)
                let ready = poll(&entries, nfds_t(entries.count), pollTimeout())
                if ready < 0 {
                    if errno == EINTR { continue }
                    logger.error("control socket: poll failed", metadata: ["error": "\(UnixSocket.describe(errno))"])
                    return
                }
                let now = ContinuousClock.now
                reportSuppressed(force: false)
                if entries[1].revents != 0 { drainWakeups() }
                deliverFinishedCalls(at: now)
                handleEvents(entries, of: order)
                if entries[0].revents & Int16(POLLIN) != 0 { acceptSome() }
                // Root and the daemon's user first: others' long answers never delay their calls.
                let turn = connections.sorted { $0.value.isPrivileged && !$1.value.isPrivileged }
                for (identifier, connection) in turn {
                    serveTurn(of: connection, identifier: identifier, at: now)
                }
            }
        }

        /// When the thread ends: every descriptor closed, the socket file gone.
        private func shutDown() {
            for connection in connections.values { close(connection.descriptor) }
            close(server.listener)
            unlink(server.path)
            reportSuppressed(force: true)
            logger.debug("control socket closed", metadata: ["path": "\(server.path)"])
        }

        /// What to poll: the listener, the wake-up pipe, then the connections of `order`, for
        /// input when they take it and for output when they have some.
        private func pollEntries(for order: [UInt64]) -> [pollfd] {
            var entries = [
                pollfd(fd: server.listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server.wakeup.readDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            for identifier in order {
                guard let connection = connections[identifier] else { continue }
                var events: Int16 = 0
                if takesInput(connection) { events |= Int16(POLLIN) }
                if connection.unsentCount > 0 { events |= Int16(POLLOUT) }
                entries.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
            }
            return entries
        }

        /// The answers of the calls that ended since the last turn, each queued on its
        /// connection (unless the connection was refused or is gone).
        private func deliverFinishedCalls(at now: ContinuousClock.Instant) {
            for (identifier, answer) in server.finished.withLock({ list in
                defer { list = [] }
                return list
            }) {
                guard let connection = connections[identifier] else { continue }
                connection.busy = false
                connection.lastProgress = now
                guard !connection.refused, !connection.gone else { continue }
                switch answer {
                case nil: break
                case .reply(let reply)?: append(server.encode(reply), to: connection)
                case .encoded(let bytes)?: append(bytes, to: connection)
                case .parts(let parts)?: connection.parts = parts
                }
            }
        }

        /// Reads what the connections polled in `order` have for us, and marks those whose
        /// peer hung up (with nothing left to read) gone.
        private func handleEvents(_ entries: [pollfd], of order: [UInt64]) {
            for (index, identifier) in order.enumerated() {
                guard let connection = connections[identifier] else { continue }
                let revents = entries[index + 2].revents
                if revents & Int16(POLLIN) != 0 { readAvailable(connection) }
                if revents & (Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)) != 0, revents & Int16(POLLIN) == 0 {
                    markGone(connection)
                }
            }
        }

        /// One connection's turn: its call timeout, its next calls and replies, then its idle
        /// timeout, and its end when it is done or gone.
        private func serveTurn(of connection: Connection, identifier: UInt64, at now: ContinuousClock.Instant) {
            if !takesInput(connection), connection.partialSince != nil {
                // The rest of a call waits on us, not on the client.
                connection.partialSince = now
            }
            if let since = connection.partialSince, now - since > configuration.callTimeout, !connection.closing {
                refuse(connection, "a call that did not arrive whole within \(configuration.callTimeout)")
            }
            dispatch(connection, identifier: identifier)
            pump(connection)
            // The last part may have just gone: the next call need not wait for a wakeup.
            dispatch(connection, identifier: identifier)
            let idle = !connection.busy && now - connection.lastProgress > configuration.idleTimeout
            if idle && !connection.gone {
                if connection.unsentCount > 0 || connection.parts != nil {
                    warn("a client does not read its replies; closing it", connection.peer)
                } else if !connection.closing {
                    debug("closing an idle connection", connection.peer)
                }
            }
            let drained = connection.unsentCount == 0 && !connection.working && connection.queued.isEmpty
            if (connection.closing && drained && !connection.busy) || (connection.gone && !connection.busy) || idle {
                close(connection.descriptor)
                connections[identifier] = nil
            }
        }

        /// Whether to read from a connection now: not once it is closing, and not while its
        /// queue is full (the client then waits, in its socket buffer).
        private func takesInput(_ connection: Connection) -> Bool {
            !connection.closing && connection.queued.count < ControlServer.maximumQueuedCalls
                && connection.queuedBytes <= connection.framer.maximumMessageSize
        }

        private func pollTimeout() -> Int32 {
            // Parts still to make, or a call to start, and room for them: come straight back.
            if connections.values.contains(where: {
                !$0.gone && $0.unsentCount == 0 && ($0.parts != nil || (!$0.working && !$0.queued.isEmpty))
            }) {
                return 0
            }
            var earliest = [warnings.deadline, debugLines.deadline].compactMap { $0 }.min()
            for connection in connections.values {
                var deadlines: [ContinuousClock.Instant] = []
                if !connection.busy { deadlines.append(connection.lastProgress + configuration.idleTimeout) }
                if let since = connection.partialSince { deadlines.append(since + configuration.callTimeout) }
                for deadline in deadlines where earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
            }
            guard let earliest else { return -1 }
            return UnixSocket.millisecondsLeft(until: earliest)
        }

        private func drainWakeups() {
            server.wakeup.drain()
        }

        private func acceptSome() {
            for _ in 0..<ControlServer.maximumAcceptsPerTurn {
                let descriptor = accept(server.listener, nil, nil)
                if descriptor < 0 { return }  // EAGAIN: nothing more to accept; anything else: try on the next wakeup.
                guard ControlServer.makeNonBlockingAndCloseOnExec(descriptor), let peer = PeerCredentials.of(descriptor)
                else {
                    close(descriptor)
                    continue
                }
                if let reason = admission(peer) {
                    warn("refusing a connection: \(reason)", peer)
                    // A word before closing, so that envctl can say why; it is small enough for
                    // any socket buffer, and a client that cannot take it loses nothing.
                    let bytes = server.encode(
                        .error(ControlInterface.Error.tooManyConnections, ["reason": .string(reason)]))
                    _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    close(descriptor)
                    continue
                }
                nextIdentifier += 1
                connections[nextIdentifier] = Connection(
                    descriptor: descriptor, peer: peer,
                    maximumMessageSize: peer.isPrivileged
                        ? max(configuration.maximumPrivilegedMessageSize, configuration.maximumMessageSize)
                        : configuration.maximumMessageSize)
            }
        }

        /// Why a connection from `peer` is not taken, or `nil` when it is.
        private func admission(_ peer: PeerCredentials) -> String? {
            if connections.count >= configuration.maximumConnections {
                return "\(configuration.maximumConnections) connections are open, the most there may be"
            }
            if peer.isPrivileged { return nil }
            var unprivileged = 0
            var sameUser = 0
            for connection in connections.values where !connection.isPrivileged {
                unprivileged += 1
                if connection.peer.uid == peer.uid { sameUser += 1 }
            }
            if sameUser >= configuration.maximumConnectionsPerUser {
                return "uid \(peer.uid) has \(sameUser) connections open, the most one user may"
            }
            let shared = max(configuration.maximumConnections - configuration.reservedPrivilegedConnections, 0)
            if unprivileged >= shared {
                return
                    "users other than root and the daemon's have \(unprivileged) connections open, the most they may (the rest are kept for root and the daemon's user)"
            }
            return nil
        }

        private func readAvailable(_ connection: Connection) {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let count = buffer.withUnsafeMutableBytes { read(connection.descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { return }
                markGone(connection)
                return
            }
            if count == 0 {
                // The client is done sending; answer what it asked, then close.
                connection.closing = true
                connection.partialSince = nil
                return
            }
            let now = ContinuousClock.now
            for frame in connection.framer.append(buffer[..<count]) {
                switch frame {
                case .message(let bytes):
                    connection.queued.append(bytes)
                    connection.queuedBytes += bytes.count
                    connection.lastProgress = now
                    if connection.queued.count > ControlServer.maximumQueuedCalls {
                        refuse(
                            connection, "more than \(ControlServer.maximumQueuedCalls) calls waiting on one connection")
                        return
                    }
                case .tooLarge:
                    refuse(connection, "a call larger than \(connection.framer.maximumMessageSize) bytes")
                    return
                }
            }
            if connection.framer.pendingByteCount == 0 {
                connection.partialSince = nil
            } else if connection.partialSince == nil {
                connection.partialSince = now
            }
        }

        /// Answers a protocol violation with an error, then closes the connection.
        private func refuse(_ connection: Connection, _ reason: String) {
            warn("\(reason); closing the connection", connection.peer)
            connection.queued = []
            connection.queuedBytes = 0
            connection.parts = nil
            connection.partialSince = nil
            connection.closing = true
            connection.refused = true
            append(
                server.encode(.error(ControlInterface.Error.invalidMessage, ["reason": .string(reason)])),
                to: connection)
        }

        private func markGone(_ connection: Connection) {
            connection.closing = true
            connection.gone = true
            connection.queued = []
            connection.queuedBytes = 0
            connection.parts = nil
            connection.partialSince = nil
            connection.output = []
            connection.outputOffset = 0
        }

        /// Starts the next queued call on a connection that has none in progress, once the
        /// client has taken the replies before it.
        private func dispatch(_ connection: Connection, identifier: UInt64) {
            guard !connection.working, !connection.gone, !connection.queued.isEmpty,
                connection.unsentCount < ControlServer.outputLowWater
            else { return }
            let bytes = connection.queued.removeFirst()
            connection.queuedBytes -= bytes.count
            let call: VarlinkCall
            do {
                call = try VarlinkCoding.decode(VarlinkCall.self, from: bytes)
            } catch {
                refuse(connection, "a message that is not a varlink call")
                return
            }
            connection.busy = true
            let peer = connection.peer
            let handler = server.handler
            let server = self.server
            debug("call \(call.method)", peer)
            Task {
                let answer = await handler.answer(call, from: peer)
                server.finished.withLock { $0.append((identifier, call.oneway == true ? nil : answer)) }
                server.wake()
            }
        }

        /// Makes the next parts of a long reply while the client keeps up, and sends what it can.
        private func pump(_ connection: Connection) {
            var made = 0
            while !connection.gone {
                if connection.unsentCount > 0 { flush(connection) }
                guard connection.unsentCount < ControlServer.outputLowWater, made < ControlServer.maximumPartsPerTurn,
                    connection.parts != nil
                else { return }
                if let message = connection.parts?.nextMessage() {
                    append(message, to: connection)
                    made += 1
                }
                if connection.parts?.isFinished ?? true { connection.parts = nil }
            }
        }

        private func append(_ bytes: [UInt8], to connection: Connection) {
            if connection.outputOffset > 0 {
                connection.output.removeFirst(connection.outputOffset)
                connection.outputOffset = 0
            }
            connection.output += bytes
        }

        private func flush(_ connection: Connection) {
            while connection.unsentCount > 0 {
                let written = connection.output[connection.outputOffset...].withUnsafeBytes { buffer in
                    send(connection.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno != EAGAIN { markGone(connection) }
                    return
                }
                connection.outputOffset += written
            }
            // Everything made so far is read: progress, as a complete call is.
            connection.output = []
            connection.outputOffset = 0
            connection.lastProgress = .now
        }

        // MARK: Logging about clients

        private func warn(_ message: String, _ peer: PeerCredentials) {
            reportSuppressed(force: false)
            guard warnings.admit() else { return }
            logger.warning("control socket: \(message)", metadata: ["peer": "\(peer)"])
        }

        private func debug(_ message: String, _ peer: PeerCredentials) {
            guard logger.logLevel <= .debug else { return }
            reportSuppressed(force: false)
            guard debugLines.admit() else { return }
            logger.debug("control socket: \(message)", metadata: ["peer": "\(peer)"])
        }

        /// Logs how many lines about clients were left out, once their window is over (or now,
        /// with `force`, when serving ends).
        private func reportSuppressed(force: Bool) {
            let now: ContinuousClock.Instant = force ? .now + configuration.clientWarningInterval : .now
            if let count = warnings.takeSuppressed(now: now) {
                logger.warning(
                    "control socket: \(count) similar warnings suppressed",
                    metadata: [
                        "limit": "\(configuration.clientWarningBurst) per \(configuration.clientWarningInterval)"
                    ])
            }
            if let count = debugLines.takeSuppressed(now: now) {
                logger.debug("control socket: \(count) similar debug messages suppressed")
            }
        }
    }

    /// Sets `O_NONBLOCK` and `FD_CLOEXEC` (Glibc's Swift module has no `accept4` or `pipe2`).
    private static func makeNonBlockingAndCloseOnExec(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        return flags >= 0 && fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0
            && fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0
    }

    /// `reply` as a message; if it cannot be encoded, the error is logged and the client gets
    /// `InvalidMessage` with the reason, never silence.
    fileprivate func encode(_ reply: VarlinkReply) -> [UInt8] {
        do {
            return try VarlinkCoding.encode(reply)
        } catch {
            logger.error("control socket: cannot encode a reply", metadata: ["error": "\(error)"])
            let failure = VarlinkReply.error(
                ControlInterface.Error.invalidMessage,
                ["reason": .string("cannot encode the reply: \(error)")])
            // A reply of one short string always encodes; the literal is for the impossible case.
            return (try? VarlinkCoding.encode(failure))
                ?? Array("{\"error\":\"\(ControlInterface.Error.invalidMessage.qualifiedName)\"}\0".utf8)
        }
    }

    // MARK: - Binding

    /// A listening socket at `path`. A socket file left by a crashed daemon (nobody accepts
    /// on it) is replaced; a live one, or any other kind of file, is an error.
    private static func bind(_ path: String) throws -> Int32 {
        guard let address = UnixSocket.address(path) else {
            throw ControlServerError("'\(path)' is too long for a unix socket path")
        }
        let directory = PathNames.directory(of: path)
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
