import Foundation

/// A property list parsed into a root dictionary, with errors that name the file and line.
///
/// XML property lists go through ``XMLPropertyListParser`` first; anything it does not fully
/// understand, and every binary property list, is parsed by Foundation's `PropertyListSerialization`,
/// which also reports the errors.
struct PropertyListDocument: Sendable {
    /// The file's path, or a label for in-memory data.
    let file: String
    /// The root dictionary.
    let root: [String: SettingValue]
    /// The text of an XML file, kept to locate keys for error messages.
    let text: String?

    /// A document for a dictionary that is already parsed.
    init(root: [String: SettingValue], file: String) {
        self.file = file
        self.root = root
        self.text = nil
    }

    /// Reads and parses the file at `path`.
    init(contentsOf path: String) throws(EnvironmentError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PropertyListDocument.readError(path: path, underlying: error)
        }
        try self.init(data: data, file: path)
    }

    /// Parses property-list bytes; `file` names them in errors.
    init(data: Data, file: String) throws(EnvironmentError) {
        self.file = file
        // The common case, an XML file, without Foundation's slower round trip; anything the
        // fast parser does not fully understand (or that is malformed) takes the path below.
        if case .dictionary(let root)? = XMLPropertyListParser.parse(data) {
            self.root = root
            self.text = PropertyListDocument.xmlText(of: data)
            return
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            let (reason, line) = PropertyListDocument.describe(parseError: error, data: data)
            throw EnvironmentError(
                .malformedFile, "not a valid property list: \(reason)", file: file, line: line,
                hint: "Fix the file; `plutil -lint \(file)` shows the same problem")
        }
        guard let dictionary = object as? [String: Any] else {
            let kind = SettingValue(propertyList: object)?.typeName ?? String(describing: type(of: object))
            throw EnvironmentError(
                .invalidRoot, "the root of the property list is \(kind.withArticle), expected a dictionary (<dict>)",
                file: file,
                hint: "Put `Common` and one dictionary per environment inside a top-level <dict>")
        }
        guard case .dictionary(let root)? = SettingValue(propertyList: dictionary) else {
            throw EnvironmentError(.malformedFile, "the property list holds values of unsupported types", file: file)
        }
        self.root = root
        self.text = PropertyListDocument.xmlText(of: data)
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

    private static func readError(path: String, underlying: any Error) -> EnvironmentError {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            return EnvironmentError(
                .fileNotFound, "no such file", file: path,
                hint: "Create it, or point --config-dir or $CONFIGURATION_DIRECTORY at the directory that holds it")
        }
        if isDirectory.boolValue {
            return EnvironmentError(.fileUnreadable, "is a directory, expected a property-list file", file: path)
        }
        let reason = (underlying as NSError).localizedDescription
        return EnvironmentError(
            .fileUnreadable, "cannot be read: \(reason)", file: path,
            hint: "Check the file's permissions for the user the program runs as")
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
