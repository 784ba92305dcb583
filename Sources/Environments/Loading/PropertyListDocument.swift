import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A property list parsed into a root dictionary, with errors that name the file and line.
///
/// Binary property lists are checked by ``BinaryPropertyListBounds`` and decoded by
/// ``BinaryPropertyListParser``. XML property lists go through ``XMLPropertyListParser``;
/// anything it does not fully understand is parsed by Foundation's `PropertyListSerialization`,
/// which also reports the errors.
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
    /// The text of an XML file, kept to locate keys for error messages.
    let text: String?
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
        self.text = text
        self.duplicateKeys = []
        self.unlistedDuplicateKeyCount = 0
    }

    /// The largest file read: a configuration file beyond this is a mistake (or a device
    /// file behind a link), not something to read into memory.
    static let maximumFileSize = 16 << 20

    /// Reads and parses the file at `path`, which must be a regular file (symbolic links are
    /// followed) of at most ``maximumFileSize`` bytes.
    init(contentsOf path: String) throws(EnvironmentError) {
        try self.init(data: PropertyListDocument.readRegularFile(path), file: path)
    }

    /// Parses property-list bytes; `file` names them in errors.
    init(data: Data, file: String) throws(EnvironmentError) {
        self.file = file
        // The common case, an XML file, without Foundation's slower round trip; anything the
        // fast parser does not fully understand (or that is malformed) takes the path below.
        if let (value, duplicates) = XMLPropertyListParser.parseWithDuplicates(data), case .dictionary(let root) = value
        {
            self.root = root
            self.text = PropertyListDocument.xmlText(of: data)
            self.duplicateKeys = duplicates.listed
            self.unlistedDuplicateKeyCount = duplicates.unlisted
            return
        }
        if BinaryPropertyListBounds.isBinaryPropertyList(data) {
            let (root, duplicates) = try PropertyListDocument.binaryRoot(data, file: file)
            self.root = root
            self.text = nil
            self.duplicateKeys = duplicates.listed
            self.unlistedDuplicateKeyCount = duplicates.unlisted
            return
        }
        let (parsed, duplicates) = try PropertyListDocument.preparedForFoundation(data, file: file)
        self.duplicateKeys = duplicates.listed
        self.unlistedDuplicateKeyCount = duplicates.unlisted
        let dictionary = try PropertyListDocument.foundationDictionary(parsing: parsed, of: data, file: file)
        let text = PropertyListDocument.xmlText(of: data)
        guard case .dictionary(let root)? = SettingValue(propertyList: dictionary) else {
            throw PropertyListDocument.unsupportedValueError(in: dictionary, file: file, text: text)
        }
        if text != nil { try PropertyListDocument.checkNothingFollowsRoot(data, file: file) }
        self.root = root
        self.text = text
    }

    /// What Foundation parses: the file, or a copy in which empty `<data/>` is written
    /// `<data></data>` and every copy of a key is spelled as its last; and the keys written
    /// twice.
    private static func preparedForFoundation(_ data: Data, file: String) throws(EnvironmentError)
        -> (Data, PropertyListDuplicateKeys)
    {
        let scan = XMLPropertyListParser.scan(data)
        let prepared = XMLPropertyListParser.preparedForFoundation(
            data, emptyData: scan.emptyData, keyRewrites: scan.keyRewrites)
        return (prepared ?? data, scan.duplicates)
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

    /// `parsed` read by Foundation, which must make a dictionary; errors name lines of `data`,
    /// the file as written.
    private static func foundationDictionary(parsing parsed: Data, of data: Data, file: String)
        throws(EnvironmentError) -> [String: Any]
    {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: parsed, options: [], format: nil)
        } catch {
            let (reason, line) = PropertyListDocument.describe(parseError: error, data: data)
            throw EnvironmentError(
                .malformedFile, "not a valid property list: \(reason)", file: file, line: line,
                hint: "Fix the file, then run `envctl check`: it validates the whole configuration as the daemon will")
        }
        guard let dictionary = object as? [String: Any] else {
            let kind = SettingValue(propertyList: object)?.typeName ?? String(describing: type(of: object))
            throw EnvironmentError(
                .invalidRoot, "the root of the property list is \(kind.withArticle), expected a dictionary (<dict>)",
                file: file,
                hint: "Put `Common` and one dictionary per environment inside a top-level <dict>")
        }
        return dictionary
    }

    /// Foundation stops at the end of the root element and ignores whatever follows: a stray
    /// edit, a merge leftover, a second document. None of it is configuration.
    private static func checkNothingFollowsRoot(_ data: Data, file: String) throws(EnvironmentError) {
        guard let offset = XMLPropertyListParser.offsetOfTrailingContent(data) else { return }
        let rest = data[(data.startIndex + offset)...]
        let what =
            rest.starts(with: Array("<plist".utf8)) || rest.starts(with: Array("<?xml ".utf8))
            ? "a second property list follows the first" : "text follows the end of the property list"
        throw EnvironmentError(
            .malformedFile, "\(what); only whitespace and comments may follow </plist>", file: file,
            line: data[data.startIndex..<(data.startIndex + offset)].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 },
            hint: "Remove everything after the first </plist>, then run `envctl check`")
    }

    /// The error for a parsed property list that holds a value no setting can hold: the first
    /// such value's key path, and why.
    private static func unsupportedValueError(in dictionary: [String: Any], file: String, text: String?)
        -> EnvironmentError
    {
        let document = PropertyListDocument(root: [:], file: file, text: text)
        guard let (path, reason) = firstUnsupportedValue(in: dictionary, path: []) else {
            return EnvironmentError(.malformedFile, "the property list holds values of unsupported types", file: file)
        }
        let key = path.reduce("") { $1.hasPrefix("[") ? $0 + $1 : SettingPath.joined($0, $1) }
        let last = path.last { !$0.hasPrefix("[") }
        return EnvironmentError(
            .malformedFile, "'\(key)' holds \(reason)", key: key, file: file,
            line: last.flatMap(document.line(ofKey:)),
            hint: "Write it as a <string> (or a <real>, if an approximation will do)")
    }

    /// The key path of the first value (in key order) that ``SettingValue/init(propertyList:)``
    /// refuses, with the reason; array elements appear as `[index]`.
    private static func firstUnsupportedValue(in value: Any, path: [String]) -> ([String], String)? {
        switch value {
        case let dictionary as [String: Any]:
            for key in dictionary.keys.sorted() {
                if let found = dictionary[key].flatMap({ firstUnsupportedValue(in: $0, path: path + [key]) }) {
                    return found
                }
            }
            return nil
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                if let found = firstUnsupportedValue(in: element, path: path + ["[\(index)]"]) { return found }
            }
            return nil
        default:
            guard SettingValue(propertyList: value) == nil else { return nil }
            if let number = value as? NSNumber {
                return (
                    path, "the integer \(number), outside the range of a setting's integers (\(Int.min) to \(Int.max))"
                )
            }
            return (path, "a value of an unsupported type (\(type(of: value)))")
        }
    }

    /// The text of an XML property list (`nil` for a binary one, which starts with `bplist`).
    private static func xmlText(of data: Data) -> String? {
        data.first == UInt8(ascii: "b") ? nil : String(data: data, encoding: .utf8)
    }

    /// The line of the first `<key>name</key>` in an XML file, to point errors at it.
    func line(ofKey name: String) -> Int? {
        guard let text else { return nil }
        let needle = "<key>\(name)</key>"
        guard let range = text.range(of: needle) else { return nil }
        return text[..<range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }

    /// The line of the first occurrence of `needle` in an XML file (`nil` for a binary one).
    func line(ofText needle: String) -> Int? {
        guard let text, let range = text.range(of: needle) else { return nil }
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
                let range = text.range(
                    of: "<key>\(name)</key>", range: (found?.upperBound ?? text.startIndex)..<text.endIndex)
            else { return nil }
            found = range
        }
        return found.map { text[..<$0.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 } }
    }

    /// The bytes of the regular file at `path`. FIFOs, sockets and devices are refused before
    /// anything is read from them (opened non-blocking, so a FIFO without a writer cannot
    /// block a reload), and so is anything larger than ``maximumFileSize``.
    ///
    /// - Parameter expected: What the file should be, for the errors: "a property-list file",
    ///   "a JSON Schema file".
    static func readRegularFile(_ path: String, expected: String = "a property-list file") throws(EnvironmentError)
        -> Data
    {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileAccess.error(path: path, errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileAccess.error(path: path, errno: errno) }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else {
            if kind == S_IFDIR {
                throw EnvironmentError(.fileUnreadable, "is a directory, expected \(expected)", file: path)
            }
            let what =
                switch kind {
                case S_IFIFO: "a FIFO (named pipe)"
                case S_IFSOCK: "a socket"
                case S_IFCHR: "a character device"
                case S_IFBLK: "a block device"
                default: "not a file"
                }
            throw EnvironmentError(
                .fileUnreadable, "is not a regular file: it is \(what)", file: path,
                hint: "Replace it with \(expected), or remove it (`ls -lL \(path)` shows what it is)")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileAccess.error(path: path, errno: errno)
            }
            data.append(contentsOf: buffer[..<count])
            if data.count > maximumFileSize {
                throw EnvironmentError(
                    .fileUnreadable,
                    "is larger than \(maximumFileSize >> 20) MiB, which no configuration or schema file needs",
                    file: path, hint: "Check that it is the file you meant (`ls -lL \(path)`)")
            }
        }
        return data
    }

    private static func describe(parseError: any Error, data: Data) -> (String, Int?) {
        if data.isEmpty { return ("the file is empty", nil) }
        let nsError = parseError as NSError
        let debug = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription
        var line: Int?
        if let range = debug.range(of: #"line (\d+)"#, options: .regularExpression) {
            line = Int(debug[range].dropFirst(5))
        }
        return (debug, line)
    }
}
