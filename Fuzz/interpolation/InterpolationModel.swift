// A reference model of interpolation for the fuzzer: the rules of Interpolator's documentation
// (and the README) written as plainly as possible, without the production code's shortcuts
// (no skipping of unchanged subtrees, no lazy index, no memo keyed by path strings).

import Foundation

/// What the model expects interpolation to do with one tree.
struct InterpolationModel {
    /// A value after interpolation and whether it is secret.
    struct Expansion: Equatable {
        var text: String
        var isSecret: Bool
    }

    enum Failure: Error {
        /// The error interpolation must report.
        case error(EnvironmentError.Code)
        /// More than `maximumTotalBytes` built: interpolation must fail (with
        /// interpolationLimitExceeded, or another error it met first), which the model does
        /// not try to tell.
        case tooLarge
    }

    /// The caps: a string that holds `${` may be at most `maximumValueBytes` once expanded,
    /// and all such strings together (each key once, each array element) at most
    /// `maximumTotalBytes`. The library's are 1 MiB and 16 MiB; the fuzzer gives it and the
    /// model smaller ones (`fuzzLimits`), so that inputs that reach them run fast.
    let maximumValueBytes: Int
    let maximumTotalBytes: Int

    /// Bytes built so far by strings that hold `${`, against `maximumTotalBytes`.
    private var built = 0

    /// Every key path (`Database.Host`) with its node.
    private(set) var flat: [String: SettingNode] = [:]
    /// The components of each path in `flat`.
    private var componentsOf: [String: [String]] = [:]
    /// Whether two nodes have the same dotted path (a key `a.b` next to `a` → `b`, or `b` next
    /// to `""` → `b`): then what `${a.b}` means is not defined, and the fuzzer only checks that
    /// nothing crashes or hangs and that any error is an interpolation error.
    private(set) var isAmbiguous = false
    private let environment: [String: String]
    private let secrets: Set<String>
    /// The credential files' contents, or nil if there is no credentials directory.
    private let credentials: [String: String]?
    private var memo: [String: Expansion] = [:]

    init(
        tree: [String: SettingNode], environment: [String: String], secrets: Set<String>,
        credentials: [String: String]?, maximumValueBytes: Int, maximumTotalBytes: Int
    ) {
        self.maximumValueBytes = maximumValueBytes
        self.maximumTotalBytes = maximumTotalBytes
        self.environment = environment
        self.secrets = secrets
        self.credentials = credentials
        add(tree, prefix: "", components: [])
    }

    private mutating func add(_ tree: [String: SettingNode], prefix: String, components: [String]) {
        for (key, node) in tree {
            // As the library joins paths: a key that holds a dot, or is empty, quoted.
            let path = SettingPath.joined(prefix, key)
            if flat.updateValue(node, forKey: path) != nil { isAmbiguous = true }
            componentsOf[path] = components + [key]
            if case .branch(let children, _) = node { add(children, prefix: path, components: components + [key]) }
        }
    }

    /// Whether `path` or a dictionary above it is listed in `Secrets`, ignoring case.
    func isListed(_ path: String) -> Bool {
        guard let components = componentsOf[path] ?? (try? SettingPath(parsing: path).components) else {
            return false
        }
        let folded = Set(secrets.map { $0.lowercased() })
        var prefix = ""
        for component in components {
            prefix = SettingPath.joined(prefix, component)
            if folded.contains(prefix.lowercased()) { return true }
        }
        return false
    }

    /// The leaf at `path` after interpolation.
    mutating func resolve(_ value: SettingValue, at path: String) throws(Failure) -> (SettingValue, isSecret: Bool) {
        var isSecret = isListed(path)
        let resolved = try resolve(value, key: path, isSecret: &isSecret)
        return (resolved, isSecret)
    }

    /// `key` is the leaf's own key for its string, nil inside arrays (whose elements are no key).
    private mutating func resolve(_ value: SettingValue, key: String?, isSecret: inout Bool) throws(Failure)
        -> SettingValue
    {
        switch value {
        case .string(let text):
            let expansion: Expansion
            if let key {
                expansion = try expandKey(key, text: text)
            } else {
                expansion = try expand(text, chain: [])
            }
            isSecret = isSecret || expansion.isSecret
            return .string(expansion.text)
        case .array(let elements):
            var out: [SettingValue] = []
            for element in elements { out.append(try resolve(element, key: nil, isSecret: &isSecret)) }
            return .array(out)
        case .dictionary(let values):
            var out: [String: SettingValue] = [:]
            for (name, element) in values { out[name] = try resolve(element, key: nil, isSecret: &isSecret) }
            return .dictionary(out)
        default:
            return value
        }
    }

    /// The expansion of the string at `key`, once.
    private mutating func expandKey(_ key: String, text: String, chain: [String] = []) throws(Failure) -> Expansion {
        if let done = memo[key] { return done }
        let expansion = try expand(text, chain: chain + [key])
        memo[key] = expansion
        return expansion
    }

    /// `text` with `$${` made `${` and every `${...}` replaced; `chain` holds the keys being
    /// expanded, outermost first.
    private mutating func expand(_ text: String, chain: [String]) throws(Failure) -> Expansion {
        var result = Expansion(text: "", isSecret: false)
        // Only a string that holds the bytes `${` is built, and counted against the caps.
        let bytes = Array(text.utf8)
        let counted = zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: "$") && $1 == UInt8(ascii: "{") }
        var index = text.startIndex
        while index < text.endIndex {
            let before = result.text.utf8.count
            let rest = text[index...]
            if rest.hasPrefix("$${") {
                result.text += "${"
                index = text.index(index, offsetBy: 3)
            } else if rest.hasPrefix("${") {
                guard let close = rest.firstIndex(of: "}") else { throw .error(.invalidInterpolation) }
                let piece = try reference(String(text[text.index(index, offsetBy: 2)..<close]), chain: chain)
                result.text += piece.text
                result.isSecret = result.isSecret || piece.isSecret
                index = text.index(after: close)
            } else {
                result.text.append(text[index])
                index = text.index(after: index)
            }
            guard counted else { continue }
            guard result.text.utf8.count <= maximumValueBytes else { throw .error(.interpolationLimitExceeded) }
            built += result.text.utf8.count - before
            guard built <= maximumTotalBytes else { throw .tooLarge }
        }
        return result
    }

    /// What `${reference}` stands for.
    private mutating func reference(_ reference: String, chain: [String]) throws(Failure) -> Expansion {
        if reference.hasPrefix("env:") {
            guard let value = environment[String(reference.dropFirst(4))] else {
                throw .error(.missingEnvironmentVariable)
            }
            return Expansion(text: value, isSecret: false)
        }
        if reference.hasPrefix("credential:") {
            let name = String(reference.dropFirst(11))
            // A file name: not empty, not `.` or `..`, without `/` or NUL.
            guard !name.isEmpty, !name.contains("/"), !name.utf8.contains(0), name != ".", name != ".." else {
                throw .error(.invalidInterpolation)
            }
            guard let value = credentials?[name] else { throw .error(.missingCredential) }
            return Expansion(text: value, isSecret: true)
        }
        let key = reference.trimmingCharacters(in: .whitespaces)
        guard !chain.contains(key) else { throw .error(.interpolationCycle) }
        guard let node = flat[key] ?? SettingPath.canonical(key).flatMap({ flat[$0] }) else {
            throw .error(key.contains(":") ? .invalidInterpolation : .unresolvedReference)
        }
        let listed = isListed(key)
        guard case .leaf(let configured) = node else { throw .error(.unresolvedReference) }
        switch configured.value {
        case .string(let text):
            let expansion = try expandKey(key, text: text, chain: chain)
            return Expansion(text: expansion.text, isSecret: expansion.isSecret || listed)
        case .integer, .real, .bool:
            return Expansion(text: configured.value.description, isSecret: listed)
        default:
            throw .error(.unresolvedReference)
        }
    }
}
