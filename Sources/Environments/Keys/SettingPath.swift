/// A key path: the components from the top of the configuration to one value, bounded in depth
/// and length.
///
/// Every place that makes a path goes through this type: the keys a section names at its top
/// level (`Common`, an environment, an instance, a drop-in's section), the defaults, runtime
/// overrides, `APP_` variables, the `Secrets` and `RestartRequired` lists, `${Key}` references,
/// reads, and envctl's `get`, `set` and `unset`. Keys inside a dictionary are components as
/// they are written: a map keyed by host names or bundle identifiers reads back as written.
///
/// ## The text form
///
/// Reads take a path as text, its components joined by `.`: `Database.Port`. A component that
/// holds a `.` or a `"`, or is empty, is written in double quotes, with `\"` for a quote and
/// `\\` for a backslash inside them:
///
/// ```swift
/// // Upstreams = { "api.example.com" = { Port = 443 } }
/// let port = Environment.shared.get(#"Upstreams."api.example.com".Port"#, default: 80)
/// let same = try SettingPath(components: ["Upstreams", "api.example.com", "Port"])
/// same.description   // Upstreams."api.example.com".Port
/// ```
///
/// ``description`` is the one canonical text of a path (quotes only where needed): listings,
/// errors, `envctl show` and `--json` print it, and `envctl get` and `set` accept it back. A
/// leading, trailing or doubled `.` is an error, never a path that lands on another key.
///
/// ## Bounds
///
/// A path has at most 64 components, each at most 1,024 bytes, and its text is at most 4,096
/// bytes (<doc:Limits>). A file or document whose keys go past them is refused with an error
/// naming the key, the file and the line; nothing that reads or merges paths recurses deeper
/// than 64 levels.
public struct SettingPath: Sendable, Hashable, CustomStringConvertible {
    /// The components, outermost first.
    public let components: [String]
    /// The canonical text form (see the type's documentation).
    public let description: String

    /// The most components a path may have: nested dictionaries count as well as dotted keys.
    package static let maximumDepth = 64
    /// The longest component, in UTF-8 bytes.
    package static let maximumComponentBytes = 1024
    /// The longest path, in UTF-8 bytes of its text form.
    package static let maximumBytes = 4096

    /// A path of the given components, each taken literally (a component may hold dots).
    ///
    /// - Throws: ``EnvironmentError/Code/invalidKey`` when there are no components or more
    ///   than the bounds allow.
    public init(components: [String]) throws(EnvironmentError) {
        guard !components.isEmpty else { throw Self.error("an empty key path", shown: "") }
        var text = ""
        for component in components {
            try Self.appendChecked(component, to: &text, depth: components.count)
        }
        self.components = components
        self.description = text
    }

    /// The path that `text` spells: components joined by `.`, quoted where they hold a `.`.
    ///
    /// - Throws: ``EnvironmentError/Code/invalidKey`` for empty text, an empty component (a
    ///   leading, trailing or doubled `.`), a quote that is not closed or is not a whole
    ///   component, or a path past the bounds. The error's ``EnvironmentError/key`` is the
    ///   text, shortened if long.
    public init(parsing text: String) throws(EnvironmentError) {
        let (components, canonical) = try Self.parse(text)
        self.components = components
        self.description = canonical
    }

    /// The path one component deeper.
    package func appending(_ component: String) throws(EnvironmentError) -> SettingPath {
        try SettingPath(components: components + [component])
    }

    /// The path without its last component; `nil` for a path of one component.
    package var parent: SettingPath? {
        guard components.count > 1 else { return nil }
        return try? SettingPath(components: Array(components.dropLast()))
    }

    // MARK: Text

    /// `component` as the text form writes it: quoted if it is empty or holds a `.` or `"`.
    package static func quoted(_ component: String) -> String {
        guard needsQuotes(component) else { return component }
        var text = "\""
        for character in component.unicodeScalars {
            if character == "\"" || character == "\\" { text.unicodeScalars.append("\\") }
            text.unicodeScalars.append(character)
        }
        text += "\""
        return text
    }

    /// The text of the path `parent` (a canonical text, or empty for the top) with `component`
    /// appended: what a walk over nested dictionaries makes for each key, without bounds checks
    /// (the tree it walks was checked when it was read).
    package static func joined(_ parent: String, _ component: String) -> String {
        let tail = quoted(component)
        return parent.isEmpty ? tail : parent + "." + tail
    }

    /// Whether `text` is canonical as it is, so that a table keyed by canonical paths can be
    /// read with it directly: the common case (no quote) is decided by one scan.
    static func isPlain(_ text: String) -> Bool {
        !text.utf8.contains(UInt8(ascii: "\""))
    }

    /// The canonical text of `text`, or `nil` if it spells no path: for a read whose text
    /// quotes more than needed (`"Database".Port`).
    static func canonical(_ text: String) -> String? {
        try? parse(text).canonical
    }

    /// The end of the parent's text in a canonical `text`: the index of the last `.` outside
    /// quotes, or `nil` for a path of one component.
    static func parentEnd(of text: Substring) -> Substring.Index? {
        var inQuotes = false
        var escaped = false
        var last: Substring.Index?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text.unicodeScalars[index]
            if inQuotes {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                }
            } else if character == "\"" {
                inQuotes = true
            } else if character == "." {
                last = index
            }
            index = text.unicodeScalars.index(after: index)
        }
        return last
    }

    /// Whether the text form writes `component` in quotes: it is empty, or holds a `.` or `"`.
    package static func needsQuotes(_ component: String) -> Bool {
        if component.isEmpty { return true }
        // Over the bytes at once: the swift-configuration provider asks this for every component
        // it reads, and a walk of `utf8` index by index costs about 50 instructions a byte.
        var text = component
        return text.withUTF8 { bytes in
            bytes.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "\"") }
        }
    }

    private static func appendChecked(_ component: String, to text: inout String, depth: Int)
        throws(EnvironmentError)
    {
        if component.utf8.count > maximumComponentBytes {
            throw error(
                "a key path component of \(component.utf8.count) bytes (at most \(maximumComponentBytes))",
                shown: text.isEmpty ? component : text + "." + component)
        }
        if !text.isEmpty { text += "." }
        text += quoted(component)
        if depth > maximumDepth {
            throw error("a key path of \(depth) components (at most \(maximumDepth))", shown: text)
        }
        if text.utf8.count > maximumBytes {
            throw error("a key path longer than \(maximumBytes) bytes", shown: text)
        }
    }

    private static func parse(_ text: String) throws(EnvironmentError) -> (components: [String], canonical: String) {
        // Quotes can at most double a path's text: anything longer is refused before it is read.
        if text.utf8.count > maximumBytes * 2 {
            throw error("a key path longer than \(maximumBytes) bytes", shown: text)
        }
        if let plain = plainComponents(text) { return (plain, text) }
        return try parseScalars(text)
    }

    /// ``parse(_:)`` scalar by scalar: quotes, escapes, and every error. (The keys fuzzer checks
    /// that it agrees with ``plainComponents(_:)`` wherever that one answers.)
    static func parseScalars(_ text: String) throws(EnvironmentError) -> (components: [String], canonical: String) {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { throw error("an empty key path", shown: text) }
        var components: [String] = []
        var canonical = ""
        var index = 0
        while true {
            var component = String.UnicodeScalarView()
            if scalars[index] == "\"" {
                index += 1
                var closed = false
                while index < scalars.count {
                    let scalar = scalars[index]
                    index += 1
                    if scalar == "\\", index < scalars.count {
                        component.append(scalars[index])
                        index += 1
                    } else if scalar == "\"" {
                        closed = true
                        break
                    } else {
                        component.append(scalar)
                    }
                }
                guard closed else { throw error("a quote (\") that is not closed", shown: text) }
                guard index == scalars.count || scalars[index] == "." else {
                    throw error("a quoted component followed by more than a '.'", shown: text)
                }
            } else {
                while index < scalars.count, scalars[index] != "." {
                    guard scalars[index] != "\"" else {
                        throw error("a quote (\") inside a component; quote the whole component", shown: text)
                    }
                    component.append(scalars[index])
                    index += 1
                }
                guard !component.isEmpty else {
                    throw error(
                        "an empty component (a leading, trailing or doubled '.'); quote a component that holds a '.'",
                        shown: text)
                }
            }
            components.append(String(component))
            try appendChecked(String(component), to: &canonical, depth: components.count)
            if index == scalars.count { break }
            index += 1  // the '.'
            guard index < scalars.count else {
                throw error("an empty component (a trailing '.')", shown: text)
            }
        }
        return (components, canonical)
    }

    /// The components of a path written without quotes and within every bound, in one pass
    /// over its bytes; `nil` for anything else (quotes, an empty component, a bound passed),
    /// which ``parse(_:)`` then reads scalar by scalar, with its errors. Such a text is its own
    /// canonical form. Almost every key is one: a file's 10,000 keys are read in a tenth of the
    /// instructions the scalar walk takes.
    static func plainComponents(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            guard !bytes.isEmpty, bytes.count <= maximumBytes else { return nil }
            var components: [String] = []
            var start = 0
            for index in 0...bytes.count {
                let atEnd = index == bytes.count
                if !atEnd {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") { return nil }
                    if byte != UInt8(ascii: ".") { continue }
                }
                let length = index - start
                guard length > 0, length <= maximumComponentBytes, components.count < maximumDepth else { return nil }
                components.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                start = index + 1
            }
            return components
        }
    }

    /// The error for a path that is malformed or past a bound; the path is shown shortened.
    static func error(_ what: String, shown: String) -> EnvironmentError {
        let key = Sentences.shown(shown)
        return EnvironmentError(
            .invalidKey, "'\(key)' is not a valid key path: \(what)", key: key,
            hint:
                "Join components with '.', and write a component that holds a '.' in double quotes: Upstreams.\"api.example.com\".Port"
        )
    }
}
