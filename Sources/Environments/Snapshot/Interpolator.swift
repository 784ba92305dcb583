import Foundation

/// Expands `${Key}`, `${env:VAR}` and `${credential:NAME}` in string values, after layering.
///
/// `$${` is a literal `${`. A reference to another key uses that key's interpolated value,
/// which must be a string, number or boolean. A value that used a secret key or a credential
/// becomes secret itself. Cycles and unresolved references are errors showing the chain.
struct Interpolator {
    let environmentName: String
    let processEnvironment: [String: String]
    let secretPaths: Set<String>
    private let tree: [String: SettingNode]
    /// Every path of the tree; built on the first `${Key}` reference, since most
    /// configurations have none and a large one would pay for it on every load.
    private var index: [String: SettingNode]?
    private var memo: [String: (text: String, isSecret: Bool)] = [:]

    init(
        tree: [String: SettingNode], environmentName: String, processEnvironment: [String: String],
        secretPaths: Set<String>
    ) {
        self.tree = tree
        self.environmentName = environmentName
        self.processEnvironment = processEnvironment
        self.secretPaths = secretPaths
    }

    /// Whether any leaf below `tree` has a `$` to expand or a secrecy to change.
    private func needsResolving(_ tree: [String: SettingNode], prefix: String) -> Bool {
        for (key, node) in tree {
            let path = prefix.isEmpty ? key : prefix + "." + key
            switch node {
            case .branch(let children, _):
                if needsResolving(children, prefix: path) { return true }
            case .leaf(let configured):
                if needsResolving(configured, at: path) { return true }
            }
        }
        return false
    }

    /// Whether the leaf at `path` has a `$` to expand (arrays and dictionaries may hold one) or
    /// a secrecy to change.
    private func needsResolving(_ configured: ConfiguredValue, at path: String) -> Bool {
        if Interpolator.isSecret(path, in: secretPaths) != configured.isSecret { return true }
        switch configured.value {
        case .string(let text): return text.utf8.contains(UInt8(ascii: "$"))
        case .array, .dictionary: return true
        default: return false
        }
    }

    /// The node at a full key path.
    private mutating func node(at path: String) -> SettingNode? {
        if index == nil {
            var flat: [String: SettingNode] = [:]
            flat.reserveCapacity(tree.count)
            SettingTree.flatten(tree, into: &flat)
            index = flat
        }
        return index?[path]
    }

    /// Whether `path` or one of its parents is listed as secret.
    static func isSecret(_ path: String, in secretPaths: Set<String>) -> Bool {
        if secretPaths.isEmpty { return false }
        var candidate = Substring(path)
        while true {
            if secretPaths.contains(String(candidate)) { return true }
            guard let dot = candidate.lastIndex(of: ".") else { return false }
            candidate = candidate[..<dot]
        }
    }

    /// The tree unchanged but for every leaf's secrecy, for when interpolation failed.
    static func markingSecrets(
        _ tree: [String: SettingNode], secretPaths: Set<String>, prefix: String = ""
    ) -> [String: SettingNode] {
        tree.reduce(into: [:]) { result, element in
            let (key, node) = element
            let path = prefix.isEmpty ? key : prefix + "." + key
            switch node {
            case .branch(let children, let source):
                result[key] = .branch(markingSecrets(children, secretPaths: secretPaths, prefix: path), source)
            case .leaf(let configured):
                var configured = configured
                configured.isSecret = isSecret(path, in: secretPaths)
                result[key] = .leaf(configured)
            }
        }
    }

    /// The tree with every string interpolated and every leaf's secrecy set.
    mutating func resolve(_ tree: [String: SettingNode], prefix: String = "") throws(EnvironmentError) -> [String:
        SettingNode]
    {
        // Most configurations interpolate nothing: then the tree is returned as it is, without
        // building a copy of it.
        if !needsResolving(tree, prefix: prefix) { return tree }
        var result: [String: SettingNode] = [:]
        result.reserveCapacity(tree.count)
        for (key, node) in tree {
            let path = prefix.isEmpty ? key : prefix + "." + key
            switch node {
            case .branch(let children, let source):
                result[key] = .branch(try resolve(children, prefix: path), source)
            case .leaf(let configured):
                guard needsResolving(configured, at: path) else {
                    result[key] = node  // the common case: nothing to do, so keep the node
                    continue
                }
                var secret = Interpolator.isSecret(path, in: secretPaths)
                let value = try resolveValue(
                    configured.value, path: path, isKey: true, source: configured.source, secret: &secret)
                result[key] = .leaf(ConfiguredValue(value: value, source: configured.source, isSecret: secret))
            }
        }
        return result
    }

    /// `isKey` is false for the elements of arrays (and dictionaries in them): `path` then only
    /// names them in errors. It is no key that `${...}` can refer to, and may even equal one (a
    /// key `Hosts[0]` next to an array `Hosts`), so their expansions are neither taken from nor
    /// kept in `memo`, nor part of the chain.
    private mutating func resolveValue(
        _ value: SettingValue, path: String, isKey: Bool, source: ValueSource, secret: inout Bool
    ) throws(EnvironmentError) -> SettingValue {
        switch value {
        case .string(let text):
            guard text.utf8.contains(UInt8(ascii: "$")) else { return value }
            if isKey, let done = memo[path] {
                secret = secret || done.isSecret
                return .string(done.text)
            }
            let resolved = try expand(text, path: path, source: source, chain: isKey ? [path] : [])
            if isKey { memo[path] = resolved }
            secret = secret || resolved.isSecret
            return .string(resolved.text)
        case .array(let elements):
            var out: [SettingValue] = []
            for (offset, element) in elements.enumerated() {
                out.append(
                    try resolveValue(
                        element, path: "\(path)[\(offset)]", isKey: false, source: source, secret: &secret))
            }
            return .array(out)
        case .dictionary(let values):
            var out: [String: SettingValue] = [:]
            for (key, element) in values {
                out[key] = try resolveValue(
                    element, path: path + "." + key, isKey: false, source: source, secret: &secret)
            }
            return .dictionary(out)
        default:
            return value
        }
    }

    /// Expands one string; `chain` is the list of keys being expanded, for cycle detection.
    private mutating func expand(
        _ text: String, path: String, source: ValueSource, chain: [String]
    ) throws(EnvironmentError) -> (text: String, isSecret: Bool) {
        var output = ""
        var isSecret = false
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            output += rest[..<dollar]
            let after = rest[dollar...]
            if after.hasPrefix("$${") {
                output += "${"
                rest = after.dropFirst(3)
            } else if after.hasPrefix("${") {
                guard let close = after.firstIndex(of: "}") else {
                    throw error(
                        .invalidInterpolation, "unterminated '${' in the value of '\(path)'", path: path,
                        source: source,
                        hint: "Close it with '}', or write '$${' for a literal '${'")
                }
                let reference = String(after[after.index(after.startIndex, offsetBy: 2)..<close])
                let piece = try value(of: reference, in: path, source: source, chain: chain)
                output += piece.text
                isSecret = isSecret || piece.isSecret
                rest = after[after.index(after: close)...]
            } else {
                output += "$"
                rest = after.dropFirst()
            }
        }
        output += rest
        return (output, isSecret)
    }

    private mutating func value(
        of reference: String, in path: String, source: ValueSource, chain: [String]
    ) throws(EnvironmentError) -> (text: String, isSecret: Bool) {
        if reference.hasPrefix("env:") {
            let name = String(reference.dropFirst(4))
            guard let value = processEnvironment[name] else {
                throw error(
                    .missingEnvironmentVariable,
                    "'${env:\(name)}' in '\(path)': the environment variable \(name) is not set", path: path,
                    source: source, hint: "Set it (for example with Environment= in the unit file)")
            }
            return (value, false)
        }
        if reference.hasPrefix("credential:") {
            return (try credential(String(reference.dropFirst(11)), in: path, source: source), true)
        }
        let key = reference.trimmingCharacters(in: .whitespaces)
        if chain.contains(key) {
            let cycle = (chain + [key]).joined(separator: " -> ")
            throw error(
                .interpolationCycle, "interpolation cycle: \(cycle)", path: path, source: source,
                hint: "Break the cycle by giving one of these keys a literal value")
        }
        guard let node = node(at: key) else {
            if let colon = key.firstIndex(of: ":") {
                throw error(
                    .invalidInterpolation,
                    "'${\(key)}' in '\(path)' uses the unknown kind '\(key[..<colon])'; known kinds: env, credential",
                    path: path, source: source, hint: "Use ${env:NAME}, ${credential:NAME} or ${Key}")
            }
            let trail = (chain + [key]).joined(separator: " -> ")
            throw error(
                .unresolvedReference, "'${\(key)}' in '\(path)' refers to a key with no value (\(trail))", path: path,
                source: source, hint: "Define '\(key)', or write '$${' for a literal '${'")
        }
        let referencedSecret = Interpolator.isSecret(key, in: secretPaths)
        switch node {
        case .leaf(let configured):
            switch configured.value {
            case .string(let text):
                if let done = memo[key] { return (done.text, done.isSecret || referencedSecret) }
                guard text.contains("$") else { return (text, referencedSecret) }
                let expanded = try expand(text, path: key, source: configured.source, chain: chain + [key])
                memo[key] = expanded
                return (expanded.text, expanded.isSecret || referencedSecret)
            case .integer, .double, .bool:
                return (configured.value.description, referencedSecret)
            default:
                break
            }
            throw error(
                .unresolvedReference,
                "'${\(key)}' in '\(path)' refers to \(configured.value.typeName.withArticle); only strings, numbers and booleans can be interpolated",
                path: path, source: source)
        case .branch:
            throw error(
                .unresolvedReference,
                "'${\(key)}' in '\(path)' refers to a dictionary; only strings, numbers and booleans can be interpolated",
                path: path, source: source)
        }
    }

    private func credential(_ name: String, in path: String, source: ValueSource) throws(EnvironmentError) -> String {
        // A NUL would end the path early: `db-password\0x` would read `db-password`.
        guard !name.isEmpty, !name.contains("/"), !name.utf8.contains(0), name != ".", name != ".." else {
            throw error(
                .invalidInterpolation, "'${credential:\(name)}' in '\(path)' is not a valid credential name",
                path: path, source: source)
        }
        guard let directory = processEnvironment[EnvironmentOptions.credentialsDirectoryVariable], !directory.isEmpty
        else {
            throw error(
                .missingCredential,
                "'${credential:\(name)}' in '\(path)': $CREDENTIALS_DIRECTORY is not set, so credential '\(name)' cannot be read",
                path: path, source: source,
                hint: "Add LoadCredential=\(name):/path/to/secret to the unit, or set CREDENTIALS_DIRECTORY")
        }
        let file = (directory as NSString).appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: file) else {
            throw error(
                .missingCredential,
                "'${credential:\(name)}' in '\(path)': credential file \(file) is missing or unreadable",
                path: path, source: source, hint: "Check the unit's LoadCredential=\(name):... line")
        }
        var text = String(decoding: data, as: UTF8.self)
        // One trailing line break; "\r\n" is a single Character, so one removeLast() drops it whole.
        if text.hasSuffix("\r\n") || text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    private func error(
        _ code: EnvironmentError.Code, _ message: String, path: String, source: ValueSource, hint: String? = nil
    ) -> EnvironmentError {
        EnvironmentError(code, message, key: path, environment: environmentName, file: source.file, hint: hint)
    }
}
