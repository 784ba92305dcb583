import Environments
import EnvironmentsControl
import JSONText
import Logging
import SystemdSupport
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
#elseif canImport(Darwin)
    import Darwin
#endif

/// Answers the control socket's calls from the environment and its reloader.
///
/// Anyone who can connect may `Describe`, `Get`, `History` (secrets redacted) and `Schema`. `Reload`, `Check` and
/// secret values are for root and the daemon's own user only (checked with `SO_PEERCRED`).
/// systemd's `io.systemd.service` is answered too (`ControlHandler+SystemdService.swift`).
struct ControlHandler: Sendable {
    let environment: Environment
    let reloader: ConfigurationReloader
    let applicationName: String
    /// `Describe` without `more`: the largest single reply; a larger answer is `ExpectedMore`.
    var maximumUnpagedReplySize = 1 << 20
    /// `Describe` with `more`: the size one part is cut at.
    var partSize = 64 << 10

    /// What a call is answered with.
    enum Answer: Sendable {
        /// One reply.
        case reply(VarlinkReply)
        /// One reply, already encoded with its NUL.
        case encoded([UInt8])
        /// Replies made one at a time as the client takes them.
        case parts(DescribeParts)
    }

    /// Answers `call`: `Describe` in parts when the caller set `more`, everything else in one reply.
    func answer(_ call: VarlinkCall, from peer: PeerCredentials) async -> Answer {
        guard call.method == ControlInterface.Method.describe.qualifiedName else {
            return .reply(await handle(call, from: peer))
        }
        let showSecrets = call.parameters?["showSecrets"]?.boolValue ?? false
        if showSecrets, let denied = deny(call, peer, reason: "secret values") { return .reply(denied) }
        let snapshot = environment.snapshot
        var lastReload: [String: JSONValue]?
        if let report = await reloader.lastReloadReport { lastReload = report.verdictJSON }
        var logLevelOverride: [String: JSONValue]?
        if let override = await reloader.logLevelOverride {
            let record = LogLevelOverrideRecord(
                key: reloader.logLevelKey, level: override.level.rawValue, syslogLevel: override.syslogLevel,
                uid: Int(override.uid), setAt: override.setAt.formatted(.iso8601))
            do {
                logLevelOverride = try JSONValue.parameters(of: record)
            } catch {
                return .reply(Self.encodingFailure(error))
            }
        }
        var parts = DescribeParts(
            snapshot: snapshot, showSecrets: showSecrets, applicationName: applicationName, lastReload: lastReload,
            logLevelOverride: logLevelOverride, partSize: partSize)
        if call.more == true { return .parts(parts) }
        guard let message = parts.singleMessage(limit: maximumUnpagedReplySize) else {
            return .reply(.error(VarlinkServiceError.expectedMore))
        }
        return .encoded(message)
    }

    func handle(_ call: VarlinkCall, from peer: PeerCredentials) async -> VarlinkReply {
        let parameters = call.parameters ?? [:]
        switch call.method {
        case "org.varlink.service.GetInfo":
            return info()
        case "org.varlink.service.GetInterfaceDescription":
            return interfaceDescription(parameters)
        case ControlInterface.Method.get.qualifiedName:
            return get(call, parameters, from: peer)
        case ControlInterface.Method.check.qualifiedName:
            if let denied = deny(call, peer, reason: "checking the configuration") { return denied }
            return await check(parameters)
        case ControlInterface.Method.reload.qualifiedName:
            if let denied = deny(call, peer, reason: "reloading") { return denied }
            return await reload(from: peer)
        case ControlInterface.Method.history.qualifiedName:
            if let extra = parameters.keys.sorted().first { return Self.invalidParameter(extra) }
            return Self.reply(await reloader.historyReply)
        case ControlInterface.Method.schema.qualifiedName:
            if let extra = parameters.keys.sorted().first { return Self.invalidParameter(extra) }
            return schema()
        case _ where call.interface == Self.systemdServiceInterface:
            return await handleSystemdService(call, from: peer)
        default:
            if call.interface == ControlInterface.name || call.interface == "org.varlink.service" {
                return .error(VarlinkServiceError.methodNotFound, ["method": .string(call.method)])
            }
            return .error(
                VarlinkServiceError.interfaceNotFound,
                ["interface": .string(call.interface ?? call.method)])
        }
    }

    /// `org.varlink.service.GetInfo`: who serves, and its interfaces.
    private func info() -> VarlinkReply {
        VarlinkReply(parameters: [
            "vendor": .string("swift-environments"), "product": .string(applicationName),
            "version": .string("1"), "url": .string("https://github.com/swift-environments"),
            "interfaces": .array([
                .string("org.varlink.service"), .string(ControlInterface.name),
                .string(Self.systemdServiceInterface),
            ]),
        ])
    }

    /// `org.varlink.service.GetInterfaceDescription`: the text of one of the three interfaces.
    private func interfaceDescription(_ parameters: [String: JSONValue]) -> VarlinkReply {
        guard let interface = parameters["interface"]?.stringValue else {
            return Self.invalidParameter("interface")
        }
        switch interface {
        case ControlInterface.name:
            return VarlinkReply(parameters: ["description": .string(ControlInterface.description)])
        case "org.varlink.service":
            return VarlinkReply(parameters: ["description": .string(Self.serviceDescription)])
        case Self.systemdServiceInterface:
            return VarlinkReply(parameters: ["description": .string(Self.systemdServiceDescription)])
        default:
            return .error(VarlinkServiceError.interfaceNotFound, ["interface": .string(interface)])
        }
    }

    /// `Get`: one setting, whether it takes a restart and what waits for one; a secret's value
    /// only for a privileged peer that asks for it.
    private func get(_ call: VarlinkCall, _ parameters: [String: JSONValue], from peer: PeerCredentials)
        -> VarlinkReply
    {
        guard let key = parameters["key"]?.stringValue else { return Self.invalidParameter("key") }
        let showSecrets = parameters["showSecrets"]?.boolValue ?? false
        // One snapshot for the value and what waits for a restart.
        let snapshot = environment.snapshot
        guard let configured = snapshot.configuredValue(forKey: key) else {
            return .error(ControlInterface.Error.noSuchSetting, ["key": .string(key)])
        }
        if showSecrets, configured.isSecret, let denied = deny(call, peer, reason: "secret values") {
            return denied
        }
        var answer: [String: JSONValue] = [
            "setting": Self.setting(key, configured, showSecrets: showSecrets).jsonValue
        ]
        let canonical = (try? SettingPath(parsing: key).description) ?? key
        answer["restartOnly"] = .bool(
            snapshot.restartRequiredKeys.contains { canonical == $0 || canonical.hasPrefix($0 + ".") })
        if let next = snapshot.pendingRestart[canonical] {
            let reveal = showSecrets && (!next.isSecret || peer.isPrivileged)
            answer["pendingRestart"] = Self.setting(canonical, next, showSecrets: reveal).jsonValue
        }
        return VarlinkReply(parameters: answer)
    }

    /// `Check`: the configuration as it would load with the candidate files in place of the
    /// files at their paths (each a file of the configuration's directory).
    private func check(_ parameters: [String: JSONValue]) async -> VarlinkReply {
        var candidates: [String: Data] = [:]
        if let list = parameters["candidates"] {
            guard case .array(let items) = list else { return Self.invalidParameter("candidates") }
            let directory = environment.snapshot.location?.directory
            let fileName = environment.options?.fileName ?? "Environments.plist"
            for item in items {
                guard let object = item.objectValue, let path = object["path"]?.stringValue,
                    let contents = object["contents"]?.stringValue, let directory,
                    let absolute = CheckCandidate.absolutePath(path, directory: directory, fileName: fileName)
                else {
                    return Self.invalidParameter("candidates")
                }
                candidates[absolute] = Data(contents.utf8)
            }
        }
        return await check(candidates: candidates)
    }

    /// `Reload`: reloads now and answers with the verdict (an error reply when rejected); the
    /// history names the caller and the unit it runs in.
    private func reload(from peer: PeerCredentials) async -> VarlinkReply {
        let report = await reloader.reload(
            trigger: .control, callerUID: peer.uid, callerUnit: ServiceUnit.ofCaller(peer.pid, uid: peer.uid))
        return VarlinkReply(
            parameters: ["verdict": .object(report.verdictJSON)],
            error: report.verdict == .rejected ? ControlInterface.Error.reloadRejected.qualifiedName : nil)
    }

    /// `Schema`: the application's declaration as JSON Schema (an empty one, `declared` false,
    /// without a declaration).
    private func schema() -> VarlinkReply {
        let declaration = environment.options?.declaration
        return Self.reply(
            SchemaReply(
                schema: (declaration ?? SettingsDeclaration([])).jsonSchemaText(title: applicationName),
                declared: declaration != nil))
    }

    /// A permission error for an unprivileged peer, or `nil` when the peer may go ahead.
    private func deny(_ call: VarlinkCall, _ peer: PeerCredentials, reason: String) -> VarlinkReply? {
        guard !peer.isPrivileged else { return nil }
        return .error(
            ControlInterface.Error.permissionDenied,
            [
                "method": .string(call.method), "uid": .int(Int(peer.uid)),
                "reason": .string("\(reason): only root and the daemon's own user (uid \(geteuid())) may"),
            ])
    }

    /// Builds the configuration with `candidates` on the build queue (it reads files and
    /// credentials and runs `validate`, which may block), and says what a reload would do.
    private func check(candidates: [String: Data]) async -> VarlinkReply {
        let (current, built) = await reloader.check(candidates: candidates)
        switch built {
        case .success(let built):
            return Self.reply(
                CheckReply(
                    environment: built.environmentName, generation: Int(current.generation),
                    changedKeys: built.changedKeys(since: current), pendingRestart: built.pendingRestart.keys.sorted(),
                    warnings: built.warnings.isEmpty ? nil : built.warnings.map(\.description)))
        case .failure(let error):
            return Self.reply(
                ["error": ConfigurationErrorRecord(error)],
                error: ControlInterface.Error.configurationRejected.qualifiedName)
        }
    }

    static func setting(_ key: String, _ configured: ConfiguredValue, showSecrets: Bool) -> SettingRecord {
        SettingRecord(
            key: key, value: configured.isSecret && !showSecrets ? nil : configured.value.description,
            type: configured.value.typeName, secret: configured.isSecret,
            source: SourceRecord(
                layer: configured.source.layer.rawValue, file: configured.source.file,
                section: configured.source.section))
    }

    /// A reply whose parameters are `record`'s members, or (with `error`) a failed call's reply
    /// with them; if `record` cannot be encoded, an error that says why, never an empty record
    /// that looks like an answer.
    static func reply(_ record: some Encodable, error name: String? = nil) -> VarlinkReply {
        do {
            return VarlinkReply(parameters: try JSONValue.parameters(of: record), error: name)
        } catch {
            return encodingFailure(error)
        }
    }

    /// The reply when a reply cannot be encoded: an error that says why.
    private static func encodingFailure(_ error: any Error) -> VarlinkReply {
        .error(
            ControlInterface.Error.invalidMessage,
            ["reason": .string("cannot encode the reply: \(error)")])
    }

    /// `org.varlink.service` itself, as varlink.org defines it.
    static let serviceDescription = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()
        """
}
