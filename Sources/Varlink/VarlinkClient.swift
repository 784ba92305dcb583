import JSONText

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a call to the control socket did not get an answer.
package struct VarlinkClientError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// A reply whose parameters are a known record.
private struct TypedVarlinkReply<Parameters: Decodable>: Decodable {
    var parameters: Parameters
    var continues: Bool?
    var error: String?
}

/// A blocking varlink client for one call at a time, for command-line tools.
package struct VarlinkClient: Sendable {
    /// The socket's path.
    package let path: String
    /// How long a call may take, connecting included (with `more`: each further reply too).
    package let timeout: Duration
    /// The largest reply message accepted (a call with `more` may get any number of them).
    package let maximumReplySize: Int
    /// The process that must be listening on `path` (`SO_PEERCRED`), when the caller named one:
    /// a socket found by convention may belong to another daemon.
    package let expectedProcess: Int32?
    /// What to add to the error when no one answers on the socket's path (given as the
    /// argument): a stale state file beside it, say; `nil` for nothing.
    package let unansweredNote: @Sendable (_ path: String) -> String?
    /// Whom the client lets answer (``PeerTrust``): checked on each connection before anything
    /// is sent; a peer it does not trust is sent nothing and the call fails with the reason.
    package let trust: PeerTrust

    package init(
        path: String, timeout: Duration = .seconds(30), maximumReplySize: Int = 64 << 20,
        expectedProcess: Int32? = nil, trust: PeerTrust = PeerTrust(),
        unansweredNote: @escaping @Sendable (_ path: String) -> String? = { _ in nil }
    ) {
        self.path = path
        self.timeout = timeout
        self.maximumReplySize = maximumReplySize
        self.expectedProcess = expectedProcess
        self.trust = trust
        self.unansweredNote = unansweredNote
    }

    /// Sends `call` and returns the daemon's reply (which may be an error reply).
    package func call(_ call: VarlinkCall) throws(VarlinkClientError) -> VarlinkReply {
        var single: VarlinkReply?
        try exchange(call) { message throws(VarlinkClientError) in
            single = try Self.decode(message)
            return false
        }
        guard let single else { throw VarlinkClientError("the daemon closed the connection without answering") }
        return single
    }

    /// Sends `call` with `more` set and hands each reply to `eachReply`, up to the one without
    /// `continues` (or an error reply, which ends the call): a long answer comes in parts, each
    /// at most ``maximumReplySize`` bytes, in any number.
    package func callWithMore(
        _ call: VarlinkCall, eachReply: (VarlinkReply) throws(VarlinkClientError) -> Void
    ) throws(VarlinkClientError) {
        var call = call
        call.more = true
        try exchange(call) { message throws(VarlinkClientError) in
            let reply = try Self.decode(message)
            try eachReply(reply)
            return reply.continues == true && reply.error == nil
        }
    }

    /// As ``callWithMore(_:eachReply:)``, with each reply's parameters decoded straight into
    /// `Parameters` (no ``JSONValue`` in between: a long answer is read at the speed of
    /// `JSONDecoder`).
    ///
    /// - Returns: The error reply that ended the call, or `nil` when it succeeded.
    package func callWithMore<Parameters: Decodable>(
        _ call: VarlinkCall, decoding: Parameters.Type, eachReply: (Parameters) throws(VarlinkClientError) -> Void
    ) throws(VarlinkClientError) -> VarlinkReply? {
        var call = call
        call.more = true
        var failure: VarlinkReply?
        try exchange(call) { message throws(VarlinkClientError) in
            if let part = try? JSONDecoder().decode(TypedVarlinkReply<Parameters>.self, from: Data(message)),
                part.error == nil
            {
                try eachReply(part.parameters)
                return part.continues == true
            }
            let reply = try Self.decode(message)
            guard reply.error != nil else {
                throw VarlinkClientError("a reply from the daemon cannot be read as \(Parameters.self)")
            }
            failure = reply
            return false
        }
        return failure
    }

    private static func decode(_ message: [UInt8]) throws(VarlinkClientError) -> VarlinkReply {
        do {
            return try VarlinkCoding.decode(VarlinkReply.self, from: message)
        } catch {
            throw VarlinkClientError("the daemon's reply is not a varlink message: \(error)")
        }
    }

    /// Connects, sends `call` and reads replies while `handle` returns `true`.
    private func exchange(_ call: VarlinkCall, _ handle: ([UInt8]) throws(VarlinkClientError) -> Bool)
        throws(VarlinkClientError)
    {
        var deadline = ContinuousClock.now + timeout
        guard let address = UnixSocket.address(path) else {
            throw VarlinkClientError("'\(path)' is not a usable socket path")
        }
        let descriptor = UnixSocket.makeStreamSocket()
        guard descriptor >= 0 else { throw VarlinkClientError("cannot create a socket: \(UnixSocket.describe(errno))") }
        defer { close(descriptor) }
        if UnixSocket.connect(descriptor, to: address) != 0 {
            let code = errno
            switch code {
            case ENOENT, ECONNREFUSED:
                throw VarlinkClientError(
                    "no daemon answers on \(path) (\(UnixSocket.describe(code))): is it running, with RuntimeDirectory= in its unit?"
                        + (unansweredNote(path).map { "; " + $0 } ?? ""))
            case EACCES, EPERM:
                throw VarlinkClientError(
                    "cannot connect to \(path): permission denied; try as root or the daemon's user")
            default:
                throw VarlinkClientError("cannot connect to \(path): \(UnixSocket.describe(code))")
            }
        }
        // Who answers, before a byte is sent: the process named, and a user trusted to be it.
        let peer = PeerCredentials.of(descriptor)
        if let expectedProcess, let peer, peer.pid != expectedProcess {
            throw VarlinkClientError(
                "the daemon on \(path) is process \(peer.pid), not \(expectedProcess); pass --socket")
        }
        if let refusal = trust.refusal(of: peer, onSocket: path) { throw VarlinkClientError(refusal) }
        let message: [UInt8]
        do {
            message = try VarlinkCoding.encode(call)
        } catch {
            throw VarlinkClientError("cannot encode the call: \(error)")
        }
        // A daemon that refuses the connection answers with an error before it reads the call.
        do {
            try send(message, on: descriptor, until: deadline)
        } catch {
            if let refusal = try? receive(from: descriptor, until: ContinuousClock.now + .seconds(1)).first {
                _ = try handle(refusal)
                return
            }
            throw error
        }
        var framer = VarlinkFramer(maximumMessageSize: maximumReplySize)
        while true {
            for reply in try receive(from: descriptor, until: deadline, framer: &framer) {
                guard try handle(reply) else { return }
            }
            // A long answer in parts: each part may take as long as a whole call.
            deadline = ContinuousClock.now + timeout
        }
    }

    /// The replies that the next read completes (at least one).
    private func receive(from descriptor: Int32, until deadline: ContinuousClock.Instant) throws(VarlinkClientError)
        -> [[UInt8]]
    {
        var framer = VarlinkFramer(maximumMessageSize: maximumReplySize)
        return try receive(from: descriptor, until: deadline, framer: &framer)
    }

    private func send(_ bytes: [UInt8], on descriptor: Int32, until deadline: ContinuousClock.Instant)
        throws(VarlinkClientError)
    {
        var offset = 0
        while offset < bytes.count {
            try wait(for: Int16(POLLOUT), on: descriptor, until: deadline)
            let written = bytes[offset...].withUnsafeBytes { buffer in
                #if canImport(Darwin)
                    Darwin.send(descriptor, buffer.baseAddress, buffer.count, 0)
                #else
                    Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                #endif
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw VarlinkClientError("cannot send to \(path): \(UnixSocket.describe(errno))")
            }
            offset += written
        }
    }

    private func receive(
        from descriptor: Int32, until deadline: ContinuousClock.Instant, framer: inout VarlinkFramer
    ) throws(VarlinkClientError) -> [[UInt8]] {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            try wait(for: Int16(POLLIN), on: descriptor, until: deadline)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw VarlinkClientError("cannot read from \(path): \(UnixSocket.describe(errno))")
            }
            if count == 0 { throw VarlinkClientError("the daemon closed the connection without answering") }
            var replies: [[UInt8]] = []
            for frame in framer.append(buffer[..<count]) {
                switch frame {
                case .message(let bytes):
                    replies.append(bytes)
                case .tooLarge:
                    throw VarlinkClientError("a reply from the daemon is larger than \(maximumReplySize) bytes")
                }
            }
            if !replies.isEmpty { return replies }
        }
    }

    private func wait(for events: Int16, on descriptor: Int32, until deadline: ContinuousClock.Instant)
        throws(VarlinkClientError)
    {
        while true {
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, UnixSocket.millisecondsLeft(until: deadline))
            if ready > 0 { return }
            if ready == 0 { throw VarlinkClientError("no answer from \(path) within \(timeout)") }
            if errno != EINTR { throw VarlinkClientError("poll: \(UnixSocket.describe(errno))") }
        }
    }
}
