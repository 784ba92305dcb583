extension String {
    /// The string without the white space at its ends: what Foundation's
    /// `trimmingCharacters(in: .whitespaces)` returns (the tab and Unicode's space separators,
    /// Zs; newlines stay), without Foundation and without its detour through NSString, which
    /// cost more than all the rest of following a reference in the interpolator.
    package func trimmingWhitespace() -> String {
        func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
            if scalar.isASCII { return scalar == " " || scalar == "\t" }
            return scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, isWhitespace(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isWhitespace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        // A String with nothing to trim is returned without a copy.
        if start == scalars.startIndex, end == scalars.endIndex { return self }
        return String(scalars[start..<end])
    }

    /// The string without white space and line breaks at its ends: what Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` returns (Unicode's White_Space: the
    /// tab, U+000A to U+000D, U+0085 and the separators, Z*).
    package func trimmingWhitespaceAndNewlines() -> String {
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, scalars[start].properties.isWhitespace { start = scalars.index(after: start) }
        while end > start, scalars[scalars.index(before: end)].properties.isWhitespace {
            end = scalars.index(before: end)
        }
        if start == scalars.startIndex, end == scalars.endIndex { return self }
        return String(scalars[start..<end])
    }
}

extension String {
    /// The string with every occurrence of `target` replaced by `replacement`, compared byte by
    /// byte in UTF-8, left to right, without overlaps: as Foundation's
    /// `replacingOccurrences(of:with:)` does without options, and unlike the standard library's
    /// `replacing(_:with:)`, which compares characters, so that `abc` followed by a combining
    /// accent (one character `c\u{301}`) would not be found. Secret redaction relies on the
    /// byte comparison: a secret is never left in the text because of what follows it.
    package func replacingEvery(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8)
        let needle = Array(target.utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return self }
        var result: [UInt8] = []
        var index = 0
        var replaced = false
        while index < bytes.count {
            if bytes[index] == needle[0], index + needle.count <= bytes.count,
                bytes[index..<index + needle.count].elementsEqual(needle)
            {
                result.append(contentsOf: replacement.utf8)
                index += needle.count
                replaced = true
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return replaced ? String(decoding: result, as: UTF8.self) : self
    }
}
