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

/// Expands `${Key}`, `${env:VAR}` and `${credential:NAME}` in string values, after layering.
///
/// `$${` is a literal `${`. A reference to another key uses that key's interpolated value,
/// which must be a string, number or boolean. A value that used a secret key or a credential
/// becomes secret itself. Cycles and unresolved references are errors showing the chain.
///
/// Whatever a file holds, interpolation costs bounded time, memory and stack:
/// - References are followed with a work stack of its own, not one level of recursion per
///   reference, so a chain of references as long as the files allow (`K2 = ${K1}`, ...
///   hundreds of thousands of keys) costs memory in proportion to its length and no stack.
/// - Each key is expanded once (later references reuse its value) and each credential file is
///   read once, so the work is proportional to the text of the files plus what is produced.
/// - What is produced is capped: one value at ``maximumValueBytes`` (1 MiB) and the whole
///   configuration at ``maximumTotalBytes`` (16 MiB). Past either, loading fails with
///   ``EnvironmentError/Code/interpolationLimitExceeded``, naming the key and its file (a
///   running daemon rejects the reload and keeps its last good configuration). Keys that
///   double each other's text (`A2 = ${A1}${A1}`) reach the first cap within about twenty keys.
/// - A cycle's or an unresolved reference's chain is shortened in the message when long.
///
/// A string without `${` is left as it is (`$` alone, as in `$5`, is literal): it is neither
/// built again nor counted.
struct Interpolator {
    /// The most UTF-8 bytes one value may hold once interpolated: 1 MiB.
    ///
    /// A value that holds `${` (a key's string, or a string in an array or a dictionary) is
    /// built by interpolation; it may be at most this long, as may a credential it reads. Real
    /// values (URLs, paths, connection strings, a certificate) are a few KiB at most, hundreds
    /// of times less; anything longer comes from keys that repeat each other.
    static let maximumValueBytes = 1 << 20

    /// The most UTF-8 bytes interpolation may build for a whole configuration: 16 MiB.
    ///
    /// The sum of the lengths of every value interpolation builds (each value that holds `${`,
    /// counted once, after expansion). It bounds the memory a load or a rejected reload takes
    /// whatever the files hold. A large real configuration (100,000 keys, each a 100-byte URL
    /// built from `${Host}`) builds 10 MB; a typical one a few KiB.
    static let maximumTotalBytes = 16 << 20

    /// The caps one interpolation works within.
    struct Limits {
        /// The most UTF-8 bytes one value may hold once interpolated.
        var valueBytes = Interpolator.maximumValueBytes
        /// The most UTF-8 bytes interpolation may build in all.
        var totalBytes = Interpolator.maximumTotalBytes
    }

    /// How many keys of a cycle's or an unresolved reference's chain an error shows at each
    /// end; the middle of a longer chain is elided.
    static let chainKeysShown = 8

    let environmentName: String
    let processEnvironment: [String: String]
    let secretPaths: Set<String>
    /// Paths whose values are final (a restart-only key's running value): kept as they are,
    /// and their text is used as it is by `${...}` (a `${` in it was a `$${`).
    let heldPaths: Set<String>
    /// Whether ``references`` is filled in.
    var recordsReferences = false
    /// For each key whose value was expanded, the keys its `${...}` name (an array's
    /// references are its key's). Filled in only with ``recordsReferences``.
    private(set) var references: [String: Set<String>] = [:]
    /// The key being resolved, which owns the references of its array's elements.
    private var currentKey = ""
    /// The documented caps, but for the fuzzer, which uses smaller ones to run faster.
    let limits: Limits
    private let tree: [String: SettingNode]
    /// Every path of the tree; built on the first `${Key}` reference, since most
    /// configurations have none and a large one would pay for it on every load.
    private var index: [String: SettingNode]?
    private var memo: [String: Expansion] = [:]
    /// Credential files read so far, by name.
    private var credentials: [String: String] = [:]
    /// The credential whose ``EnvironmentError/Code/missingCredential`` error was thrown last,
    /// so that the error can point at the line of its `${credential:NAME}`.
    private(set) var missingCredentialName: String?
    /// Whether a credential that cannot be read here becomes ``UnreadableCredential/placeholder(_:)``
    /// instead of an error (`EnvironmentOptions.unreadableCredentialsAsPlaceholders`).
    let usesPlaceholders: Bool
    /// Credentials found unreadable here, by name: each is checked once.
    private var unreadableNames: Set<String> = []
    /// For each key whose own text named a credential that could not be read here, the
    /// credentials' names as messages show them. Filled in only with ``usesPlaceholders``.
    private var unreadableByKey: [String: Set<String>] = [:]
    /// Bytes built so far, against `limits.totalBytes`.
    private var totalBytes = 0

    /// A value after interpolation, and whether a secret went into it.
    private struct Expansion {
        var text: String
        var isSecret: Bool
    }

    /// One string being expanded: what a level of recursion held before.
    private struct Frame {
        /// Whether `path` is a key, which `${...}` can refer to; else an element of an array
        /// or a dictionary (`Hosts[0]`), named only in errors.
        let isKey: Bool
        let path: String
        /// The file that set it, for errors.
        let file: String?
        let text: String
        /// Where the scan goes on: after the last reference handled.
        var position: String.Index
        var output = ""
        var bytes = 0
        var isSecret = false

        init(path: String, isKey: Bool, source: ValueSource, text: String) {
            self.isKey = isKey
            self.path = path
            self.file = source.file
            self.text = text
            self.position = text.startIndex
        }
    }

    init(
        tree: [String: SettingNode], environmentName: String, processEnvironment: [String: String],
        secretPaths: Set<String>, held: Set<String> = [], limits: Limits = Limits(), usesPlaceholders: Bool = false
    ) {
        self.limits = limits
        self.usesPlaceholders = usesPlaceholders
        // Keys built from a key that used a placeholder hold the placeholder too.
        self.recordsReferences = usesPlaceholders
        self.heldPaths = held
        self.tree = tree
        self.environmentName = environmentName
        self.processEnvironment = processEnvironment
        self.secretPaths = Interpolator.folded(secretPaths)
    }

    /// Whether `text` holds a `${` (or `$${`): else interpolation leaves it as it is.
    static func hasReference(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            // `${` needs a `$` first: most values have none, found by one search of the bytes.
            guard var index = bytes.firstIndex(of: UInt8(ascii: "$")) else { return false }
            while index + 1 < bytes.count {
                if bytes[index + 1] == UInt8(ascii: "{") { return true }
                index += 1
                guard let next = bytes[index...].firstIndex(of: UInt8(ascii: "$")) else { return false }
                index = next
            }
            return false
        }
    }

    /// Whether any leaf below `tree` has a `$` to expand or a secrecy to change.
    private func needsResolving(_ tree: [String: SettingNode], prefix: String) -> Bool {
        for (key, node) in tree {
            switch node {
            case .branch(let children, _):
                if needsResolving(children, prefix: SettingPath.joined(prefix, key)) { return true }
            case .leaf(let configured):
                // Without secret paths, no path is secret: the path is not made for every key.
                if secretPaths.isEmpty {
                    if configured.isSecret || needsResolving(configured.value) { return true }
                } else if needsResolving(configured, at: SettingPath.joined(prefix, key)) {
                    return true
                }
            }
        }
        return false
    }

    /// Whether a value has a `$` to expand (arrays and dictionaries may hold one).
    private func needsResolving(_ value: SettingValue) -> Bool {
        switch value {
        case .string(let text): Interpolator.hasReference(text)
        case .array, .dictionary: true
        default: false
        }
    }

    /// Whether the leaf at `path` has a `$` to expand (arrays and dictionaries may hold one) or
    /// a secrecy to change.
    private func needsResolving(_ configured: ConfiguredValue, at path: String) -> Bool {
        if Interpolator.isSecret(path, in: secretPaths) != configured.isSecret { return true }
        return needsResolving(configured.value)
    }

    /// The node at a full key path.
    private mutating func node(at path: String) -> SettingNode? {
        if index == nil {
            var flat: [String: SettingNode] = [:]
            flat.reserveCapacity(tree.count)
            SettingTree.flatten(tree, into: &flat)
            index = flat
        }
        if let node = index?[path] { return node }
        guard !SettingPath.isPlain(path), let canonical = SettingPath.canonical(path) else { return nil }
        return index?[canonical]
    }

    /// Whether `path` or one of its parents is listed as secret, however either is spelled:
    /// `secretPaths` is folded (``folded(_:)``), and so is `path` here, so that a key set as
    /// `APP_DATABASE__PASSWORD` or written `database.password` in a drop-in is as secret as
    /// `Database.Password`, and `STRASSE.Token` as secret as `Straße.Token`
    /// (``KeyIdentity/folded(_:)``, the one rule for keys compared ignoring case).
    static func isSecret(_ path: String, in secretPaths: Set<String>) -> Bool {
        if secretPaths.isEmpty { return false }
        return isListed(KeyIdentity.folded(path), in: secretPaths)
    }

    /// Secret paths as ``isSecret(_:in:)`` compares them: folded (``KeyIdentity/folded(_:)``).
    static func folded(_ secretPaths: Set<String>) -> Set<String> {
        Set(secretPaths.map(KeyIdentity.folded))
    }

    /// Whether `path` (a canonical text) or one of its parents is in `paths`, spelled exactly.
    static func isListed(_ path: String, in paths: Set<String>) -> Bool {
        if paths.isEmpty { return false }
        var candidate = Substring(path)
        while true {
            if paths.contains(String(candidate)) { return true }
            guard let dot = SettingPath.parentEnd(of: candidate) else { return false }
            candidate = candidate[..<dot]
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
            let path = SettingPath.joined(prefix, key)
            if !heldPaths.isEmpty, heldPaths.contains(path) {
                result[key] = node  // a running value, final
                continue
            }
            switch node {
            case .branch(let children, let source):
                result[key] = .branch(try resolve(children, prefix: path), source)
            case .leaf(let configured):
                guard needsResolving(configured, at: path) else {
                    result[key] = node  // the common case: nothing to do, so keep the node
                    continue
                }
                var secret = Interpolator.isSecret(path, in: secretPaths)
                currentKey = path
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
            guard Interpolator.hasReference(text) else { return value }
            if isKey, let done = memo[path] {
                secret = secret || done.isSecret
                return .string(done.text)
            }
            let resolved = try expand(Frame(path: path, isKey: isKey, source: source, text: text))
            secret = secret || resolved.isSecret
            return .string(resolved.text)
        case .array(let elements):
            var out: [SettingValue] = []
            out.reserveCapacity(elements.count)
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
                    element, path: SettingPath.joined(path, key), isKey: false, source: source, secret: &secret)
            }
            return .dictionary(out)
        default:
            return value
        }
    }

    /// What a `${...}` stands for: its text now, or a key whose string must be expanded first.
    private enum Piece {
        case text(String, isSecret: Bool)
        case expand(Frame)
    }

    /// Expands `first`'s string and, on a work stack, every key's string it refers to that is
    /// not expanded yet (each then kept in `memo`).
    private mutating func expand(_ first: Frame) throws(EnvironmentError) -> Expansion {
        var stack = [first]
        // The keys on the stack: `${X}` for an X in it is a cycle.
        var inChain: Set<String> = []
        if first.isKey { inChain.insert(first.path) }
        while !stack.isEmpty {
            if let pushed = try scanTop(of: &stack, inChain: inChain) {
                // A key, which `piece` found unexpanded and not in the chain.
                inChain.insert(pushed.path)
                stack.append(pushed)
                continue
            }
            // The top string is done.
            let done = stack.removeLast()
            let expansion = Expansion(text: done.output, isSecret: done.isSecret)
            if done.isKey {
                memo[done.path] = expansion
                inChain.remove(done.path)
            }
            // Only keys are pushed: the frame below referred to this one.
            guard let parent = stack.indices.last else { return expansion }
            try append(expansion.text[...], to: &stack[parent])
            stack[parent].isSecret =
                stack[parent].isSecret || expansion.isSecret || Interpolator.isSecret(done.path, in: secretPaths)
        }
        // Not reached: the loop returns when the first frame is done.
        return Expansion(text: "", isSecret: false)
    }

    /// Scans the string of the top frame of `stack` on from its position, until it ends
    /// (`nil`) or refers to a key to expand first (that key's frame, to push).
    private mutating func scanTop(of stack: inout [Frame], inChain: Set<String>) throws(EnvironmentError) -> Frame? {
        let top = stack.count - 1
        while true {
            let text = stack[top].text
            let rest = text[stack[top].position...]
            guard let dollar = rest.firstIndex(of: "$") else {
                try append(rest, to: &stack[top])
                stack[top].position = text.endIndex
                return nil
            }
            try append(rest[..<dollar], to: &stack[top])
            let after = rest[dollar...]
            if after.hasPrefix("$${") {
                try append("${", to: &stack[top])
                stack[top].position = after.dropFirst(3).startIndex
            } else if after.hasPrefix("${") {
                if let pushed = try followReference(at: after, in: &stack, inChain: inChain) { return pushed }
            } else {
                try append("$", to: &stack[top])
                stack[top].position = after.dropFirst().startIndex
            }
        }
    }

    /// Follows the `${...}` that `after` starts with, in the top frame of `stack`: appends
    /// the text it stands for, or returns the frame of a key to expand first.
    private mutating func followReference(at after: Substring, in stack: inout [Frame], inChain: Set<String>)
        throws(EnvironmentError) -> Frame?
    {
        let top = stack.count - 1
        guard let close = after.firstIndex(of: "}") else {
            throw error(
                .invalidInterpolation, "unterminated '${' in the value of '\(stack[top].path)'",
                path: stack[top].path, file: stack[top].file,
                hint: "Close it with '}', or write '$${' for a literal '${'")
        }
        let reference = String(after[after.index(after.startIndex, offsetBy: 2)..<close])
        stack[top].position = after.index(after: close)
        switch try piece(reference, in: stack[top], stack: stack, inChain: inChain) {
        case .text(let piece, let isSecret):
            try append(piece[...], to: &stack[top])
            stack[top].isSecret = stack[top].isSecret || isSecret
            return nil
        case .expand(let frame):
            return frame
        }
    }

    /// Appends `piece` to `frame`'s output, within both caps.
    private mutating func append(_ piece: Substring, to frame: inout Frame) throws(EnvironmentError) {
        let count = piece.utf8.count
        if count == 0 { return }
        if frame.bytes + count > limits.valueBytes {
            throw error(
                .interpolationLimitExceeded,
                "the value of '\(frame.path)' would be longer than \(Interpolator.describe(bytes: limits.valueBytes)) after interpolation, the limit for one value",
                path: frame.path, file: frame.file,
                hint:
                    "Look for references that repeat a key (each '${A}${A}' doubles the text); interpolation is meant for short values such as URLs and paths"
            )
        }
        if totalBytes + count > limits.totalBytes {
            throw error(
                .interpolationLimitExceeded,
                "interpolation would build more than \(Interpolator.describe(bytes: limits.totalBytes)) for the whole configuration (reached in the value of '\(frame.path)'), the limit for all values together",
                path: frame.path, file: frame.file,
                hint:
                    "Look for many keys that copy a long value through '${...}'; interpolation is meant for short values such as URLs and paths"
            )
        }
        frame.bytes += count
        totalBytes += count
        frame.output += piece
    }

    /// `1 MiB (1048576 bytes)`.
    static func describe(bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB (\(bytes) bytes)" : "\(bytes) bytes"
    }

    /// `chain` joined with arrows, its middle elided when it is long.
    static func describe(chain: [String]) -> String {
        let count = chainKeysShown
        let chain = chain.map(Sentences.shown)
        guard chain.count > 2 * count + 1 else { return chain.joined(separator: " -> ") }
        let elided = chain.count - 2 * count
        return (chain.prefix(count) + ["... (\(elided) more)"] + chain.suffix(count)).joined(separator: " -> ")
    }

    /// What one `${reference}` in `frame` stands for: a text (an environment variable, a
    /// credential, a key's value already known) or a key to expand first.
    private mutating func piece(
        _ reference: String, in frame: Frame, stack: [Frame], inChain: Set<String>
    ) throws(EnvironmentError) -> Piece {
        if reference.hasPrefix("env:") {
            return .text(try environmentVariable(String(reference.dropFirst(4)), in: frame), isSecret: false)
        }
        if reference.hasPrefix("credential:") {
            return try credentialPiece(String(reference.dropFirst(11)), in: frame)
        }
        let key = reference.trimmingWhitespace()
        if inChain.contains(key) {
            // The keys being expanded, outermost first.
            let chain = stack.filter(\.isKey).map(\.path)
            throw error(
                .interpolationCycle, "interpolation cycle: \(Interpolator.describe(chain: chain + [key]))",
                path: frame.path, file: frame.file, hint: "Break the cycle by giving one of these keys a literal value")
        }
        guard let node = node(at: key) else {
            throw unknownReference(key, in: frame, chain: stack.filter(\.isKey).map(\.path))
        }
        if recordsReferences { references[frame.isKey ? frame.path : currentKey, default: []].insert(key) }
        return try keyPiece(key, node: node, in: frame)
    }

    /// The value of `${env:name}`.
    private func environmentVariable(_ name: String, in frame: Frame) throws(EnvironmentError) -> String {
        guard let value = processEnvironment[name] else {
            let name = Sentences.shown(name)
            throw error(
                .missingEnvironmentVariable,
                "'${env:\(name)}' in '\(frame.path)': the environment variable \(name) is not set", path: frame.path,
                file: frame.file, hint: "Set it (for example with Environment= in the unit file)")
        }
        return value
    }

    /// The text of `${credential:name}`, secret; its placeholder when it cannot be read and
    /// placeholders are allowed.
    private mutating func credentialPiece(_ name: String, in frame: Frame) throws(EnvironmentError) -> Piece {
        guard let text = try credential(name, in: frame.path, file: frame.file) else {
            let shownName = Sentences.shown(name)
            unreadableByKey[frame.isKey ? frame.path : currentKey, default: []].insert(shownName)
            return .text(UnreadableCredential.placeholder(shownName), isSecret: true)
        }
        return .text(text, isSecret: true)
    }

    /// The error for `${key}` when no key has that path: an unknown kind (`${kind:...}`) or a
    /// missing key, with the chain of keys that led to it.
    private func unknownReference(_ key: String, in frame: Frame, chain: [String]) -> EnvironmentError {
        let shownKey = Sentences.shown(key)
        if let colon = key.firstIndex(of: ":") {
            return error(
                .invalidInterpolation,
                "'${\(shownKey)}' in '\(frame.path)' uses the unknown kind '\(Sentences.shown(String(key[..<colon])))'; known kinds: env, credential",
                path: frame.path, file: frame.file, hint: "Use ${env:NAME}, ${credential:NAME} or ${Key}")
        }
        return error(
            .unresolvedReference,
            "'${\(shownKey)}' in '\(frame.path)' refers to a key with no value (\(Interpolator.describe(chain: chain + [key])))",
            path: frame.path, file: frame.file, hint: "Define '\(shownKey)', or write '$${' for a literal '${'")
    }

    /// What `${key}` stands for, given its node: the text of a string, number or boolean
    /// (held, already expanded, or without references), or the key's frame to expand first.
    private func keyPiece(_ key: String, node: SettingNode, in frame: Frame) throws(EnvironmentError) -> Piece {
        let referencedSecret = Interpolator.isSecret(key, in: secretPaths)
        let shownKey = Sentences.shown(key)
        switch node {
        case .leaf(let configured):
            switch configured.value {
            case .string(let text):
                if !heldPaths.isEmpty, Interpolator.isListed(key, in: heldPaths) {
                    return .text(text, isSecret: configured.isSecret || referencedSecret)
                }
                if let done = memo[key] { return .text(done.text, isSecret: done.isSecret || referencedSecret) }
                guard Interpolator.hasReference(text) else { return .text(text, isSecret: referencedSecret) }
                return .expand(Frame(path: key, isKey: true, source: configured.source, text: text))
            case .integer, .real, .bool:
                return .text(configured.value.description, isSecret: configured.isSecret || referencedSecret)
            default:
                throw error(
                    .unresolvedReference,
                    "'${\(shownKey)}' in '\(frame.path)' refers to \(configured.value.typeName.withArticle); only strings, numbers and booleans can be interpolated",
                    path: frame.path, file: frame.file)
            }
        case .branch:
            throw error(
                .unresolvedReference,
                "'${\(shownKey)}' in '\(frame.path)' refers to a dictionary; only strings, numbers and booleans can be interpolated",
                path: frame.path, file: frame.file)
        }
    }

    /// The keys whose values were built from `roots` (or from keys below them) through
    /// `${...}`, directly or through other keys: known after ``resolve(_:prefix:)`` with
    /// ``recordsReferences``.
    func keys(dependingOn roots: Set<String>) -> Set<String> {
        var referrers: [String: [String]] = [:]
        for (key, referenced) in references {
            for name in referenced { referrers[name, default: []].append(key) }
        }
        var found: Set<String> = []
        var work: [String] = []
        for (name, keys) in referrers where Interpolator.isListed(name, in: roots) {
            for key in keys where found.insert(key).inserted { work.append(key) }
        }
        while let name = work.popLast() {
            for key in referrers[name] ?? [] where found.insert(key).inserted { work.append(key) }
        }
        return found
    }

    /// Every key whose value holds ``UnreadableCredential/placeholder(_:)`` (its own text named
    /// the credential, or it was built from such a key through `${...}`), with the names of
    /// the credentials: known after ``resolve(_:prefix:)`` with ``usesPlaceholders``.
    func keysWithUnreadableCredentials() -> [String: Set<String>] {
        var result = unreadableByKey
        for (root, names) in unreadableByKey {
            for key in keys(dependingOn: [root]) { result[key, default: []].formUnion(names) }
        }
        return result
    }

    /// The text of credential `name`; `nil` when it cannot be read here and
    /// ``usesPlaceholders``: `$CREDENTIALS_DIRECTORY` is not set, or this user may not read
    /// its file (a missing file is an error all the same).
    private mutating func credential(_ name: String, in path: String, file: String?) throws(EnvironmentError)
        -> String?
    {
        if let known = credentials[name] { return known }
        if unreadableNames.contains(name) { return nil }
        // As messages show them.
        let shownName = Sentences.shown(name)
        // A NUL would end the path early: `db-password\0x` would read `db-password`.
        guard !name.isEmpty, !name.contains("/"), !name.utf8.contains(0), name != ".", name != ".." else {
            throw error(
                .invalidInterpolation, "'${credential:\(shownName)}' in '\(path)' is not a valid credential name",
                path: path, file: file)
        }
        guard let directory = processEnvironment[EnvironmentOptions.credentialsDirectoryVariable], !directory.isEmpty
        else {
            if usesPlaceholders {
                unreadableNames.insert(name)
                return nil
            }
            missingCredentialName = name
            throw error(
                .missingCredential,
                "'${credential:\(shownName)}' in '\(path)': $CREDENTIALS_DIRECTORY is not set, so credential '\(shownName)' cannot be read",
                path: path, file: file,
                hint: Interpolator.credentialHint(shownName, givesNone: true))
        }
        let credentialFile = PathNames.join(directory, name)
        let shownFile = PathNames.join(directory, shownName)
        if usesPlaceholders, access(credentialFile, R_OK) != 0, errno == EACCES || errno == EPERM {
            unreadableNames.insert(name)
            return nil
        }
        // At most the cap and a line break, and one byte more to tell that it is longer.
        guard let data = Interpolator.contents(of: credentialFile, upTo: limits.valueBytes + 3) else {
            missingCredentialName = name
            throw error(
                .missingCredential,
                "'${credential:\(shownName)}' in '\(path)': credential file \(shownFile) is missing or unreadable",
                path: path, file: file, hint: Interpolator.credentialHint(shownName, givesNone: false))
        }
        var text = String(decoding: data, as: UTF8.self)
        // One trailing line break; "\r\n" is a single Character, so one removeLast() drops it whole.
        if text.hasSuffix("\r\n") || text.hasSuffix("\n") { text.removeLast() }
        guard text.utf8.count <= limits.valueBytes else {
            throw error(
                .interpolationLimitExceeded,
                "'${credential:\(shownName)}' in '\(path)': credential file \(shownFile) is longer than \(Interpolator.describe(bytes: limits.valueBytes)), the limit for one value",
                path: path, file: file, hint: "Check the unit's LoadCredential=\(shownName):... line")
        }
        credentials[name] = text
        return text
    }

    /// What to do about a credential the daemon was not given: the unit settings that give one
    /// (an encrypted one first, which `envctl credential set` writes), and that credentials are
    /// given at start. Never the credential's text, which was not read.
    ///
    /// - Parameter givesNone: Whether there is no `$CREDENTIALS_DIRECTORY` at all.
    static func credentialHint(_ shownName: String, givesNone: Bool) -> String {
        let add =
            "add LoadCredentialEncrypted=\(shownName):/etc/credstore.encrypted/UNIT.\(shownName) to the unit "
            + "(envctl credential set \(shownName) encrypts the secret with systemd-creds and writes both), "
            + "or LoadCredential=\(shownName):/path/to/secret; then restart the unit, as systemd gives credentials at start"
        return givesNone
            ? "The daemon runs with no credentials: \(add) (outside systemd, set CREDENTIALS_DIRECTORY)"
            : "The unit does not give the credential \(shownName), or its file is missing: \(add); envctl credential list shows what the unit gives"
    }

    /// The first `limit` bytes of the regular file at `file` (all of it, if shorter), or nil if
    /// it cannot be read or is no regular file (opened non-blocking, so a FIFO cannot block).
    private static func contents(of file: String, upTo limit: Int) -> Data? {
        let descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while data.count < limit {
            let wanted = min(buffer.count, limit - data.count)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, wanted) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            data.append(contentsOf: buffer[..<count])
        }
        return data
    }

    private func error(
        _ code: EnvironmentError.Code, _ message: String, path: String, file: String?, hint: String? = nil
    ) -> EnvironmentError {
        EnvironmentError(code, message, key: path, environment: environmentName, file: file, hint: hint)
    }
}

/// What a `${credential:NAME}` stands for where the credential cannot be read: envctl reading
/// the files from an operator's shell, which has no `$CREDENTIALS_DIRECTORY` (systemd gives
/// it to the daemon alone) or may not read the daemon's credential files.
package enum UnreadableCredential {
    /// `<credential NAME: not readable here>`: never the credential's text, which was not read.
    package static func placeholder(_ shownName: String) -> String {
        "<credential \(shownName): not readable here>"
    }
}
