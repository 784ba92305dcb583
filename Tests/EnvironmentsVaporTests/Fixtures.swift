#if Vapor
    import Environments
    import EnvironmentsDaemon
    import EnvironmentsVapor
    import Foundation
    import Testing
    import Vapor

    // Vapor's `Environment` keeps its meaning in this module, as the integration's docs advise;
    // ours is `Environments.Environment`, `app.environments` and `req.environments`. That this
    // module compiles is the check that the strategy works.
    typealias Environment = Vapor.Environment

    /// The settings the test applications declare.
    enum Settings {
        static let greeting = Setting<String>("Greeting", default: "Hello", summary: "What GET /greeting answers")
        static let port = Setting<Int>(
            "HTTP.port", default: 8080, bounds: .range(1...65535), restartOnly: true, summary: "The port")
        static let logLevel = Setting<String>(
            "LogLevel", default: "info",
            bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"),
            summary: "The lowest level logged")
        static let declaration = SettingsDeclaration([greeting, port, logLevel])
    }

    /// A configuration directory of its own in a temporary directory, with a real
    /// `Environments.plist` that a test rewrites as an editor would (temporary file + rename).
    final class ConfigurationDirectory {
        let path: String

        init(greeting: String = "first greeting", port: Int = 8080) throws {
            path =
                FileManager.default.temporaryDirectory
                .appendingPathComponent("environments-vapor-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try write(greeting: greeting, port: port)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        var socketPath: String { path + "/configuration.varlink" }

        /// `Common` holds the greeting, the port and the log level; `Debug`, `Release` and
        /// `Staging` sections exist.
        func write(greeting: Any, port: Any = 8080, logLevel: String = "info") throws {
            let document: [String: Any] = [
                "Common": ["Greeting": greeting, "HTTP": ["port": port], "LogLevel": logLevel],
                "Debug": [String: Any](), "Release": [String: Any](), "Staging": [String: Any](),
            ]
            let data = try PropertyListSerialization.data(fromPropertyList: document, format: .xml, options: 0)
            let temporary = path + "/.Environments.plist.tmp"
            try data.write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path + "/Environments.plist") == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }

        /// Options for this directory, with the test settings declared.
        var options: EnvironmentOptions {
            var options = EnvironmentOptions(applicationName: "environments-vapor-tests", configDirectory: path)
            options.declaration = Settings.declaration
            return options
        }

        /// The integration's configuration for a service inside the test process: no systemd
        /// notifications or `SIGHUP` (the process is not the service's), the control socket here.
        var integration: VaporEnvironmentsConfiguration {
            var service = EnvironmentService.Configuration()
            service.systemdNotifications = false
            service.stateFile = nil
            service.controlSocket = ControlSocketConfiguration(path: socketPath)
            return VaporEnvironmentsConfiguration(service: service, reloadsOnHangup: false)
        }
    }

    /// One varlink call on a Unix socket (systemd's IPC: a JSON object ended by a NUL byte each
    /// way), as `varlinkctl` makes it; the reply's JSON object. Blocking socket calls run on a
    /// Dispatch queue, not on Swift's cooperative pool.
    func varlinkCall(_ socketPath: String, method: String) async throws -> [String: Any] {
        let reply: Data = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try blockingVarlinkCall(socketPath, method: method) })
            }
        }
        let object = try JSONSerialization.jsonObject(with: reply)
        return object as? [String: Any] ?? [:]
    }

    private func blockingVarlinkCall(_ socketPath: String, method: String) throws -> Data {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var request = Array("{\"method\":\"\(method)\",\"parameters\":{}}".utf8)
        request.append(0)
        guard write(descriptor, request, request.count) == request.count else { throw POSIXError(.EIO) }
        var reply = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(0) {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { throw POSIXError(.ECONNRESET) }
            reply += buffer[0..<count]
        }
        return Data(reply.prefix { $0 != 0 })
    }

    /// The next change applied to `environment` after `action` ran.
    func nextChange(
        of environment: Environments.Environment, after action: () throws -> Void
    ) async throws -> EnvironmentChange? {
        let changes = environment.changes()
        try action()
        for await change in changes { return change }
        return nil
    }
#endif
