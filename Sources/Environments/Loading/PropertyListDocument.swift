#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A property list parsed into a root dictionary, with errors that name the file and line.
///
/// Binary property lists are checked by ``BinaryPropertyListBounds`` and decoded by
/// ``BinaryPropertyListParser``; XML property lists by ``XMLPropertyListParser``, whose
/// failures become errors with the file's line. No Foundation parser is involved.
///
/// A key written more than once in one dictionary keeps its last copy, in XML and binary files
/// alike (as Apple's XML reader and Python's `plistlib` do), and every such duplicate is listed
/// in ``duplicateKeys``.
struct PropertyListDocument: Sendable {
    /// A key written more than once in one dictionary: the dictionary's key path, the key, and
    /// the lines of its first and last copies (XML only).
    typealias DuplicateKey = PropertyListDuplicateKey

    /// The file's path, or a label for in-memory data.
    let file: String
    /// The root dictionary.
    let root: [String: SettingValue]
    /// The text of an XML file, to locate keys for error messages: made from ``xmlBytes`` when
    /// asked (an error's line), not at every load, which would copy and validate the whole file.
    var text: String? {
        givenText ?? xmlBytes.flatMap(PropertyListDocument.xmlText(of:))
    }
    private let givenText: String?
    /// The bytes of an XML file.
    private let xmlBytes: Data?
    /// The keys written more than once in one dictionary, in document order: at most
    /// ``PropertyListDuplicateKeys/maximumListed`` (100); ``unlistedDuplicateKeyCount`` counts
    /// the rest. The value read is always the last copy's.
    let duplicateKeys: [DuplicateKey]
    /// Duplicate keys beyond those in ``duplicateKeys``.
    let unlistedDuplicateKeyCount: Int

    /// A document for a dictionary that is already parsed.
    init(root: [String: SettingValue], file: String, text: String? = nil) {
        self.file = file
        self.root = root
        self.givenText = text
        self.xmlBytes = nil
        self.duplicateKeys = []
        self.unlistedDuplicateKeyCount = 0
    }

    /// Parses property-list bytes; `file` names them in errors.
    init(data: Data, file: String) throws(EnvironmentError) {
        self.file = file
        if BinaryPropertyListBounds.isBinaryPropertyList(data) {
            let (root, duplicates) = try PropertyListDocument.binaryRoot(data, file: file)
            self.root = root
            self.givenText = nil
            self.xmlBytes = nil
            self.duplicateKeys = duplicates.listed
            self.unlistedDuplicateKeyCount = duplicates.unlisted
            return
        }
        if data.isEmpty {
            throw EnvironmentError(
                .malformedFile, "not a valid property list: the file is empty", file: file,
                hint: "Fix the file, then run `envctl check`: it validates the whole configuration as the daemon will")
        }
        switch XMLPropertyListParser.read(data) {
        case .success(let (value, duplicates)):
            guard case .dictionary(let root) = value else {
                throw EnvironmentError(
                    .invalidRoot,
                    "the root of the property list is \(value.typeName.withArticle), expected a dictionary (<dict>)",
                    file: file, hint: "Put `Common` and one dictionary per environment inside a top-level <dict>")
            }
            self.root = root
            self.givenText = nil
            self.xmlBytes = data
            self.duplicateKeys = duplicates.listed
            self.unlistedDuplicateKeyCount = duplicates.unlisted
        case .failure(let failure):
            throw PropertyListDocument.error(failure, in: data, file: file)
        }
    }

    /// The error for an XML document the parser refused: what it found, with the line, and
    /// the key when a value is at fault.
    private static func error(_ failure: XMLPropertyListParser.Failure, in data: Data, file: String) -> EnvironmentError
    {
        let offset = min(max(failure.offset, 0), data.count)
        let line = data[data.startIndex..<(data.startIndex + offset)].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        if failure.isTrailingContent {
            let rest = data[(data.startIndex + offset)...]
            let what =
                rest.starts(with: Array("<plist".utf8)) || rest.starts(with: Array("<?xml ".utf8))
                ? "a second property list follows the first" : "text follows the end of the property list"
            return EnvironmentError(
                .malformedFile, "\(what); only whitespace and comments may follow </plist>", file: file, line: line,
                hint: "Remove everything after the first </plist>, then run `envctl check`")
        }
        let key =
            failure.path.isEmpty
            ? nil : failure.path.reduce("") { $1.hasPrefix("[") ? $0 + $1 : SettingPath.joined($0, $1) }
        if let key, failure.reason.hasPrefix("the integer ") {
            return EnvironmentError(
                .malformedFile, "'\(key)' holds \(failure.reason)", key: key, file: file, line: line,
                hint: "Write it as a <string> (or a <real>, if an approximation will do)")
        }
        return EnvironmentError(
            .malformedFile, "not a valid property list: \(failure.reason)" + (key.map { " (in '\($0)')" } ?? ""),
            key: key, file: file, line: line,
            hint: "Fix the file, then run `envctl check`: it validates the whole configuration as the daemon will")
    }

    /// The root dictionary of a binary property list, and the keys written twice in one of its
    /// dictionaries (``BinaryPropertyListParser``).
    private static func binaryRoot(_ data: Data, file: String) throws(EnvironmentError)
        -> ([String: SettingValue], PropertyListDuplicateKeys)
    {
        // Checked before anything is built: a few hundred bytes can refer to one array 2^40
        // times, and a parser that builds every reference as a value of its own never finishes.
        let inspection = BinaryPropertyListBounds.inspect(data)
        if let problem = inspection.problem {
            throw EnvironmentError(
                .malformedFile, "not a usable binary property list: \(problem.reason)", file: file,
                hint:
                    "Check where this file came from; `plutil -p` shows a sound one, and `plutil -convert xml1` makes it readable"
            )
        }
        let value: SettingValue
        do {
            value = try BinaryPropertyListParser.parse(data)
        } catch {
            switch error {
            case .unsupportedValue(let path, let reason):
                let key = path.reduce("") { $1.hasPrefix("[") ? $0 + $1 : SettingPath.joined($0, $1) }
                throw EnvironmentError(
                    .malformedFile, "'\(key)' holds \(reason)", key: key, file: file,
                    hint: "Write it as a <string> (or a <real>, if an approximation will do)")
            case .malformed(let problem):
                throw EnvironmentError(
                    .malformedFile, "not a usable binary property list: \(problem.reason)", file: file,
                    hint:
                        "Check where this file came from; `plutil -p` shows a sound one, and `plutil -convert xml1` makes it readable"
                )
            }
        }
        guard case .dictionary(let root) = value else {
            throw EnvironmentError(
                .invalidRoot,
                "the root of the property list is \(value.typeName.withArticle), expected a dictionary (<dict>)",
                file: file, hint: "Put `Common` and one dictionary per environment inside a top-level <dict>")
        }
        return (root, inspection.duplicates)
    }

    /// The text of an XML property list (`nil` for a binary one, which starts with `bplist`).
    private static func xmlText(of data: Data) -> String? {
        data.first == UInt8(ascii: "b") ? nil : String(validating: data, as: UTF8.self)
    }

    /// The line of the first `<key>name</key>` in an XML file, to point errors at it.
    func line(ofKey name: String) -> Int? {
        guard let text else { return nil }
        let needle = "<key>\(name)</key>"
        guard let range = text.firstRange(of: needle) else { return nil }
        return text[..<range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }

    /// The line of the first occurrence of `needle` in an XML file (`nil` for a binary one).
    func line(ofText needle: String) -> Int? {
        guard let text, let range = text.firstRange(of: needle) else { return nil }
        return text[..<range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }

    /// The line of a key inside dictionaries in an XML file: of `<key>path[0]</key>`, then of
    /// the first `<key>path[1]</key>` after it, and so on. A guess where a key name repeats in
    /// an earlier sibling; `nil` if a key is not found or the file is binary.
    func line(ofKeyPath path: [String]) -> Int? {
        guard let text else { return nil }
        var found: Range<String.Index>?
        for name in path {
            guard
                let range = text[(found?.upperBound ?? text.startIndex)...].firstRange(of: "<key>\(name)</key>")
            else { return nil }
            found = range
        }
        return found.map { text[..<$0.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 } }
    }
}
