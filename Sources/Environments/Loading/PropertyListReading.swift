#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// Property-list bytes read as the daemon reads them (``XMLPropertyListParser`` and
/// ``BinaryPropertyListParser``, after ``BinaryPropertyListBounds``), for the modules that read
/// property lists of their own: the editing engine's drop-ins, `envctl`'s credential scan and
/// the fleet tool's documents. No Foundation parser is involved.
package enum PropertyListReading {
    /// The root dictionary of an XML or binary property list; errors say what is wrong, with
    /// the line (XML) and the key, as the daemon's do.
    ///
    /// - Throws: An ``EnvironmentError`` whose code is `invalidRoot` for a root that is no
    ///   dictionary, `malformedFile` for bytes that are no property list.
    package static func root(_ data: Data, file: String) throws(EnvironmentError) -> [String: SettingValue] {
        try PropertyListDocument(data: data, file: file).root
    }

    /// The root value of an XML or binary property list, whatever it is.
    ///
    /// - Throws: An ``EnvironmentError`` (`malformedFile`) for bytes that are no property list.
    package static func value(_ data: Data, file: String) throws(EnvironmentError) -> SettingValue {
        if BinaryPropertyListBounds.isBinaryPropertyList(data) {
            if let problem = BinaryPropertyListBounds.inspect(data).problem {
                throw EnvironmentError(
                    .malformedFile, "not a usable binary property list: \(problem.reason)", file: file)
            }
            do {
                return try BinaryPropertyListParser.parse(data)
            } catch {
                switch error {
                case .unsupportedValue(_, let reason):
                    throw EnvironmentError(.malformedFile, "a value holds \(reason)", file: file)
                case .malformed(let problem):
                    throw EnvironmentError(
                        .malformedFile, "not a usable binary property list: \(problem.reason)", file: file)
                }
            }
        }
        switch XMLPropertyListParser.read(data) {
        case .success(let parsed):
            return parsed.value
        case .failure(let failure):
            throw EnvironmentError(.malformedFile, "not a valid property list: \(failure.reason)", file: file)
        }
    }
}
