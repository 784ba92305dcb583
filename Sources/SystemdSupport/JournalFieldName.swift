/// Turns arbitrary strings into valid journal field names.
///
/// journald accepts field names of 1 to 64 characters from `A`–`Z`, `0`–`9` and `_`
/// that do not start with `_` or a digit, and silently drops fields with any other name.
/// ``sanitize(_:)`` maps every string to a valid name, so no field is ever dropped.
package enum JournalFieldName {
    /// The longest field name journald accepts.
    package static let maximumLength = 64

    /// The prefix put in front of names that would start with `_` or a digit.
    package static let leadingCharacterPrefix = "F_"

    /// The name used for an empty string.
    package static let emptyNameReplacement = "FIELD"

    /// Whether journald accepts `name` as a field name as it is.
    ///
    /// - Parameter name: A candidate field name.
    /// - Returns: `true` for 1 to 64 characters of `A`–`Z`, `0`–`9`, `_`, not starting with
    ///   `_` or a digit.
    package static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumLength else { return false }
        guard isUppercaseLetter(first) else { return false }
        return bytes.allSatisfy(isAllowed)
    }

    /// Maps `name` to a valid journal field name.
    ///
    /// Letters are uppercased, every other character outside `A`–`Z`, `0`–`9`, `_`
    /// becomes `_`, a name starting with `_` or a digit gets the prefix `F_`, the result is
    /// cut to 64 characters, and an empty name becomes `FIELD`. Valid names are unchanged.
    ///
    /// ```swift
    /// JournalFieldName.sanitize("request.id")  // "REQUEST_ID"
    /// JournalFieldName.sanitize("_private")    // "F__PRIVATE"
    /// ```
    ///
    /// - Parameter name: Any string, for example a swift-log metadata key.
    /// - Returns: A name for which ``isValid(_:)`` is `true`.
    package static func sanitize(_ name: String) -> String {
        if isValid(name) { return name }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count)
        for character in name.unicodeScalars {
            let byte = character.isASCII ? UInt8(character.value) : UInt8(ascii: "_")
            let upper = isLowercaseLetter(byte) ? byte - 32 : byte
            bytes.append(isAllowed(upper) ? upper : UInt8(ascii: "_"))
        }
        guard let first = bytes.first else { return emptyNameReplacement }
        if !isUppercaseLetter(first) {
            bytes.insert(contentsOf: leadingCharacterPrefix.utf8, at: 0)
        }
        return String(decoding: bytes.prefix(maximumLength), as: UTF8.self)
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        isUppercaseLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_")
    }

    private static func isUppercaseLetter(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }

    private static func isLowercaseLetter(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
