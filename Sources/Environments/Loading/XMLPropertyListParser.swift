#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The parser of XML property lists (`Environments.plist` files), single-pass, straight from
/// UTF-8 bytes into ``SettingValue``s, without Foundation.
///
/// It is the only XML reader of the package: what it refuses is refused, with a ``Failure``
/// that says what was found, where (a byte offset, which `PropertyListDocument` turns into a
/// line) and, for a value, at which key. It reads what property-list writers produce and
/// people write by hand, as Foundation's `PropertyListSerialization` reads it: decimal and
/// hexadecimal (`0x1F`) integers with a sign, reals in decimal or exponent notation and
/// `inf`, `infinity` and `nan` in any case, `<true/>` and `<true></true>`, attributes on any
/// element (ignored), entity and character references, CDATA, a UTF-8 byte-order mark, and
/// one U+FEFF at the start of a string dropped. It refuses, where Foundation is lenient or
/// reads something else: other encodings than UTF-8, base64 that is not strict (Foundation
/// skips what it cannot decode), dates in any other form than `yyyy-MM-ddTHH:mm:ssZ`
/// (Foundation reads `2020-13-01` as a day of 2021), the character reference `&#0;`, nesting
/// deeper than ``maximumDepth``, and anything after the root element.
///
/// Whenever both accept a document, its values equal what `PropertyListSerialization` and
/// `SettingValue(foundationObject:)` give for the same bytes once every empty `<data/>` is
/// written `<data></data>` (``expandingEmptyData(_:)``): both are zero bytes for Apple's and
/// Python's readers, and Foundation on Linux refuses the first. The `plist` fuzzer checks it.
///
/// It records every key written more than once in a dictionary (the last copy wins, as in
/// Foundation), with the lines of both copies; ``scan(_:)`` finds them in documents it leaves
/// to Foundation.
struct XMLPropertyListParser {
    /// Why a document was refused: where the parser stopped and what it found there.
    struct Failure: Error, Sendable, Equatable {
        /// The byte offset where the problem starts.
        var offset: Int
        /// What is wrong, as a phrase: "unknown element <strin>", "the <integer> is not an
        /// integer"; never a value of the file (it may be a secret).
        var reason: String
        /// The keys (and `[index]`es) of the value at fault, outermost first, when a value is.
        var path: [String] = []
        /// Whether the root element is whole and something other than whitespace and comments
        /// follows it (at ``offset``).
        var isTrailingContent = false
    }

    /// Parses an XML property list; `nil` if the bytes are not one (``read(_:)`` says why).
    static func parse(_ data: Data) -> SettingValue? {
        parseWithDuplicates(data)?.value
    }

    /// ``parse(_:)``, with the keys written more than once in a dictionary.
    static func parseWithDuplicates(_ data: Data) -> (value: SettingValue, duplicates: PropertyListDuplicateKeys)? {
        try? read(data).get()
    }

    /// Parses an XML property list, with the keys written more than once in a dictionary, or
    /// the ``Failure`` that says why it is not one.
    static func read(_ data: Data) -> Result<(value: SettingValue, duplicates: PropertyListDuplicateKeys), Failure> {
        data.withUnsafeBytes { raw in
            var parser = XMLPropertyListParser(bytes: raw.assumingMemoryBound(to: UInt8.self))
            guard let value = parser.parseDocument() else {
                return .failure(
                    parser.failure ?? Failure(offset: parser.position, reason: "markup that is no property list's"))
            }
            return .success((value, parser.resolvedDuplicates()))
        }
    }

    /// What a walk of the structure alone finds in a document that ``parse(_:)`` leaves to
    /// Foundation: the duplicate keys, where every empty `<data/>` element starts, and the key
    /// elements to rewrite (``KeyRewrite``) so that Foundation reads the last copy of a key
    /// written in several Unicode forms.
    ///
    /// Values are skipped, not read, so unusual number or date forms do not stop it; it stops
    /// (keeping what it found) at whatever it cannot follow: markup it does not know, a key with
    /// a reference it does not decode, nesting deeper than the parser's, text in another encoding.
    static func scan(_ data: Data) -> (
        duplicates: PropertyListDuplicateKeys, emptyData: [Range<Int>], keyRewrites: [KeyRewrite]
    ) {
        data.withUnsafeBytes { raw in
            var parser = XMLPropertyListParser(bytes: raw.assumingMemoryBound(to: UInt8.self))
            parser.scanDocument()
            return (parser.resolvedDuplicates(), parser.emptyData, parser.keyRewrites)
        }
    }

    /// An earlier copy of a key, written in another Unicode form than the key's last copy
    /// (`caf&#xE9;` and `cafe&#x301;` are one key, ``KeyIdentity``): its `<key>` element
    /// (`range`, in bytes) is given the last copy's element (`replacement`'s bytes). Foundation
    /// compares keys code unit by code unit and keeps one of two such keys by its own rules;
    /// with every copy spelled as the last, it keeps the last, as for any duplicate.
    struct KeyRewrite: Sendable, Equatable {
        var range: Range<Int>
        var replacement: Range<Int>
    }

    /// The document as Foundation is given it: every empty `<data/>` written `<data></data>`
    /// (``expandingEmptyData(_:)``), and every ``KeyRewrite`` applied; `nil` when there is
    /// nothing to change.
    static func preparedForFoundation(_ data: Data, emptyData: [Range<Int>], keyRewrites: [KeyRewrite]) -> Data? {
        var edits: [(range: Range<Int>, bytes: Data)] =
            emptyData.map { ($0, Data("<data></data>".utf8)) }
        for rewrite in keyRewrites {
            let replacement = data[
                (data.startIndex + rewrite.replacement.lowerBound)..<(data.startIndex + rewrite.replacement.upperBound)]
            edits.append((rewrite.range, Data(replacement)))
        }
        guard !edits.isEmpty else { return nil }
        edits.sort { $0.range.lowerBound < $1.range.lowerBound }
        var prepared = Data(capacity: data.count + emptyData.count * 6)
        var copied = 0
        // Every edit in order and inside the document: were the scan ever wrong about hostile
        // input, Foundation would be given it as it is, and explain its error, never a trap.
        for edit in edits where edit.range.lowerBound >= copied && edit.range.upperBound <= data.count {
            prepared.append(data[(data.startIndex + copied)..<(data.startIndex + edit.range.lowerBound)])
            prepared.append(edit.bytes)
            copied = edit.range.upperBound
        }
        prepared.append(data[(data.startIndex + copied)...])
        return prepared
    }

    /// The document with every empty `<data/>` element the scan finds written `<data></data>`,
    /// which Foundation reads (as zero bytes, like Apple's and Python's readers read both);
    /// `nil` if there is none. Lines stay where they were.
    static func expandingEmptyData(_ data: Data) -> Data? {
        preparedForFoundation(data, emptyData: scan(data).emptyData, keyRewrites: [])
    }

    /// The offset of the first byte after the root element that is neither whitespace nor part
    /// of a comment, or `nil` when nothing else follows the root.
    ///
    /// Foundation's parser stops at the end of the root element and ignores the rest (text, a
    /// second `<plist>`); `PropertyListDocument` refuses such files with this. It is a scan of
    /// the markup, not a parse, meant for documents Foundation accepted: when it cannot find
    /// the root element's end (text in another encoding, say), it returns `nil`. For every
    /// document ``parse(_:)`` answers, it returns `nil` (the fuzzer checks this).
    static func offsetOfTrailingContent(_ data: Data) -> Int? {
        data.withUnsafeBytes { raw in
            var parser = XMLPropertyListParser(bytes: raw.assumingMemoryBound(to: UInt8.self))
            return parser.trailingContent()
        }
    }

    /// The predefined XML entities and the characters they stand for.
    private static let entities: [(StaticString, UInt8)] = [
        ("&amp;", UInt8(ascii: "&")), ("&lt;", UInt8(ascii: "<")), ("&gt;", UInt8(ascii: ">")),
        ("&quot;", UInt8(ascii: "\"")), ("&apos;", UInt8(ascii: "'")),
    ]

    /// Deeper nesting than this is refused rather than risking the stack.
    static let maximumDepth = 128

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// Reused for text that needs decoding (entities, CDATA, base64 without its whitespace).
    private var scratch: [UInt8] = []
    /// Where the last opening tag read starts.
    private var tagStart = 0

    /// The keys read so far in every open dictionary, innermost last, with their offsets.
    private var openKeys: [(key: String, offset: Int)] = []
    /// Where the value being read sits: a key of `openKeys` or an array index, outermost first.
    private var path: [PathStep] = []
    /// Duplicate keys found, by offset (lines are counted once, at the end).
    private var duplicates: [(path: [String], key: String, firstSpelling: String?, firstOffset: Int, offset: Int)] = []
    /// Duplicates found past ``PropertyListDuplicateKeys/maximumListed``.
    private var unlistedDuplicates = 0
    /// Where each empty `<data/>` is, attributes and all (``scan(_:)`` only).
    private var emptyData: [Range<Int>] = []
    /// Key elements to rewrite for Foundation (``scan(_:)`` only).
    private var keyRewrites: [KeyRewrite] = []
    /// The first problem met, the innermost: callers that give up after it keep it.
    private var failure: Failure?

    /// Records `reason` at `offset` (the current position by default) unless a problem was
    /// recorded already, and returns `nil`.
    private mutating func fail<T>(_ reason: String, at offset: Int? = nil) -> T? {
        if failure == nil { failure = Failure(offset: offset ?? position, reason: reason, path: currentPath) }
        return nil
    }

    /// ``fail(_:at:)`` for the functions that answer with a `Bool`: returns `false`.
    private mutating func failed(_ reason: String, at offset: Int? = nil) -> Bool {
        let _: Bool? = fail(reason, at: offset)
        return false
    }

    /// The keys and indexes of ``path``.
    private var currentPath: [String] {
        path.map { step in
            switch step {
            case .key(let index): openKeys[index].key
            case .index(let index): "[\(index)]"
            }
        }
    }

    /// A text from the file as a message shows it: whole if it is short, else its start and its
    /// length, so that no message is as long as a file.
    private static func shown(_ text: String) -> String {
        guard text.utf8.count > 64 else { return text }
        return String(decoding: text.utf8.prefix(48), as: UTF8.self) + "... (\(text.utf8.count) bytes)"
    }

    /// What starts at the current position, for a message: up to 24 bytes, escaped.
    ///
    /// Only markup is quoted (a tag up to its `>`, an entity up to its `;`): text may be a value,
    /// and a value may be a secret, which no error shows. A value's own errors say what is wrong
    /// with it without it.
    private var found: String {
        guard position < bytes.count else { return "the end of the file" }
        let terminator: UInt8
        switch bytes[position] {
        case UInt8(ascii: "<"): terminator = UInt8(ascii: ">")
        case UInt8(ascii: "&"): terminator = UInt8(ascii: ";")
        default: return "text"
        }
        var end = position
        while end < min(bytes.count, position + 24), bytes[end] != terminator { end += 1 }
        let whole = end < bytes.count && bytes[end] == terminator
        if whole { end += 1 }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<end]), as: UTF8.self)
        let shown = text.unicodeScalars.map {
            $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? String($0) : $0.escaped(asASCII: true)
        }.joined()
        return "'\(shown)\(whole ? "" : "...")'"
    }

    private enum PathStep {
        /// The value of `openKeys[index]`.
        case key(Int)
        /// The element at this index of an array.
        case index(Int)
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: - Elements

    private enum Tag {
        case plist, dict, key, string, integer, real, `true`, `false`, date, data, array
    }

    /// Skips an optional byte-order mark and the prolog: whitespace, comments, the XML
    /// declaration (UTF-8 only) and a document type without an internal subset.
    private mutating func skipProlog() -> Bool {
        // An optional UTF-8 byte-order mark.
        if hasPrefix([0xEF, 0xBB, 0xBF]) { position += 3 }
        guard !hasPrefix([0xFE, 0xFF]), !hasPrefix([0xFF, 0xFE]), !hasPrefix([0x3C, 0x00]), !hasPrefix([0x00, 0x3C])
        else {
            return failed("the file is UTF-16; only UTF-8 is read (convert it: iconv -f UTF-16 -t UTF-8)")
        }
        while true {
            guard skipMisc(inProlog: true) else { return false }
            if hasPrefix("<?xml") {
                // The declaration, or another instruction whose name starts with `xml`
                // (`<?xml-stylesheet ...?>`): Foundation checks the encoding of both.
                guard skipDeclaration() else { return false }
            } else if hasPrefix("<?") {
                // Another processing instruction (`<?xml-stylesheet ...?>`): nothing to read.
                let start = position
                position += 2  // its `?>` starts after its `<?` (`<?>` is not closed)
                guard skip(past: "?>") else {
                    return failed("a processing instruction that is never closed (?>)", at: start)
                }
            } else if hasPrefix("<!DOCTYPE") {
                let start = position
                guard skipDoctype() else {
                    return failed("a document type that is not closed, or has an internal subset ([...])", at: start)
                }
            } else {
                return true
            }
        }
    }

    private mutating func parseDocument() -> SettingValue? {
        guard skipProlog() else { return nil }
        if position == bytes.count { return fail("the file holds no element") }
        guard let (tag, isEmpty) = readOpenTag() else { return nil }
        let root: SettingValue
        if tag == .plist {
            // `<plist/>` and `<plist></plist>` are errors for Foundation; so is more than one value.
            let start = position
            guard !isEmpty, skipMisc() else {
                return fail("<plist> holds no value; it must hold one <dict>", at: start)
            }
            if closingTagLength("</plist>") != nil { return fail("<plist> holds no value; it must hold one <dict>") }
            guard let value = parseValue(depth: 0), skipMisc() else { return nil }
            guard skipClose("</plist>") else { return fail("expected </plist> after the root value, found \(found)") }
            root = value
        } else {
            // Foundation also accepts a bare value as the root element.
            guard let value = parseValue(tag: tag, isEmpty: isEmpty, depth: 0) else { return nil }
            root = value
        }
        // Only whitespace and comments may follow (Foundation ignores anything after the root).
        let end = position
        guard skipMisc(), position == bytes.count else {
            position = end
            failure = Failure(
                offset: Self.trailingOffset(bytes, from: end), reason: "trailing", isTrailingContent: true)
            return nil
        }
        return root
    }

    /// Where the trailing content starts after the root element ends at `end`: the first byte
    /// that is neither whitespace nor part of a closed comment.
    private static func trailingOffset(_ bytes: UnsafeBufferPointer<UInt8>, from end: Int) -> Int {
        var parser = XMLPropertyListParser(bytes: bytes)
        parser.position = end
        while parser.position < bytes.count {
            if isWhitespace(bytes[parser.position]) {
                parser.position += 1
            } else if parser.hasPrefix("<!--") {
                let start = parser.position
                parser.position += 4
                guard parser.skip(past: "-->") else { return start }
            } else {
                break
            }
        }
        return parser.position
    }

    /// Parses the element that starts at `position`.
    private mutating func parseValue(depth: Int) -> SettingValue? {
        guard let (tag, isEmpty) = readOpenTag() else { return nil }
        return parseValue(tag: tag, isEmpty: isEmpty, depth: depth)
    }

    /// Parses the content and closing tag of an element whose opening tag has been read.
    private mutating func parseValue(tag: Tag, isEmpty: Bool, depth: Int) -> SettingValue? {
        switch tag {
        case .dict:
            if isEmpty { return .dictionary([:]) }
            return parseDictionary(depth: depth + 1)
        case .array:
            if isEmpty { return .array([]) }
            return parseArray(depth: depth + 1)
        case .string:
            if isEmpty { return .string("") }
            guard let text = readText(close: "</string>") else { return nil }
            return .string(text)
        case .true, .false:
            // `<true></true>` too, as in Foundation; nothing between the tags.
            guard isEmpty || skipClose(tag == .true ? "</true>" : "</false>") else {
                return fail(
                    "<\(tag == .true ? "true" : "false")> holds something; write <\(tag == .true ? "true" : "false")/>")
            }
            return .bool(tag == .true)
        case .integer:
            if isEmpty { return fail("an empty <integer/>") }
            guard let value = readInteger() else { return nil }
            return .integer(value)
        case .real:
            if isEmpty { return fail("an empty <real/>") }
            guard let value = readReal() else { return nil }
            return .real(value)
        case .date:
            if isEmpty { return fail("an empty <date/>") }
            guard let value = readDate() else { return nil }
            return .date(value)
        case .data:
            // `<data/>` is zero bytes for Apple's and Python's readers (Foundation on Linux
            // refuses it; `PropertyListDocument` expands it for Foundation when it must parse).
            if isEmpty { return .data(Data()) }
            guard let value = readData() else { return nil }
            return .data(value)
        case .key:
            return fail("a <key> where a value was expected (a key without a value before it?)", at: tagStart)
        case .plist:
            return fail("a <plist> inside the property list", at: tagStart)
        }
    }

    private mutating func parseDictionary(depth: Int) -> SettingValue? {
        guard depth <= Self.maximumDepth else {
            return fail("dictionaries and arrays nested deeper than \(Self.maximumDepth) levels")
        }
        var dictionary: [String: SettingValue] = [:]
        let firstKey = openKeys.count
        while true {
            guard skipMisc() else { return nil }
            if skipClose("</dict>") {
                openKeys.removeSubrange(firstKey...)
                return .dictionary(dictionary)
            }
            let keyOffset = position
            guard let key = readKey() else { return nil }
            openKeys.append((key, keyOffset))
            path.append(.key(openKeys.count - 1))
            guard skipMisc() else { return nil }
            if closingTagLength("</dict>") != nil || hasPrefix("<key>") || hasPrefix("<key/>") {
                return fail("the key '\(Self.shown(key))' has no value")
            }
            guard let value = parseValue(depth: depth) else { return nil }
            path.removeLast()
            if dictionary.updateValue(value, forKey: key) != nil, let index = dictionary.index(forKey: key) {
                // The same key (``KeyIdentity``) again: the last copy is read, its value and, when
                // the copies are spelled in different Unicode forms, its spelling (`updateValue`
                // kept the first's).
                if !dictionary.keys[index].utf8.elementsEqual(key.utf8) {
                    dictionary.remove(at: index)
                    dictionary[key] = value
                }
                recordDuplicate(firstKey: firstKey)
            }
        }
    }

    /// Reads `<key>...</key>` or `<key/>`.
    private mutating func readKey() -> String? {
        guard hasPrefix("<key"), let (tag, isEmpty) = readOpenTag(), tag == .key else {
            return fail("expected <key> or </dict>, found \(found)")
        }
        return isEmpty ? "" : readText(close: "</key>")
    }

    /// Records that the last key of `openKeys` repeats an earlier key of the dictionary whose
    /// keys start at `firstKey` (the same key: ``KeyIdentity/isSame(_:_:)``, in whatever Unicode
    /// form); `false` if no earlier key is the same.
    @discardableResult
    private mutating func recordDuplicate(firstKey: Int) -> Bool {
        guard duplicates.count < PropertyListDuplicateKeys.maximumListed else {
            unlistedDuplicates += 1
            return true
        }
        let (key, offset) = openKeys[openKeys.count - 1]
        guard
            let first = openKeys[firstKey..<(openKeys.count - 1)].first(where: { KeyIdentity.isSame($0.key, key) })
        else { return false }
        let components = path.map { step in
            switch step {
            case .key(let index): openKeys[index].key
            case .index(let index): "[\(index)]"
            }
        }
        let firstSpelling = first.key.utf8.elementsEqual(key.utf8) ? nil : first.key
        duplicates.append((components, key, firstSpelling, first.offset, offset))
        return true
    }

    /// The duplicates found, with the lines of their offsets (counted in one pass).
    private func resolvedDuplicates() -> PropertyListDuplicateKeys {
        var result = PropertyListDuplicateKeys()
        guard !duplicates.isEmpty || unlistedDuplicates > 0 else { return result }
        let offsets = Set(duplicates.flatMap { [$0.firstOffset, $0.offset] }).sorted()
        var lines: [Int: Int] = [:]
        var line = 1
        var counted = 0
        for offset in offsets {
            while counted < offset {
                if bytes[counted] == 0x0A { line += 1 }
                counted += 1
            }
            lines[offset] = line
        }
        for duplicate in duplicates {
            result.append(
                PropertyListDuplicateKey(
                    path: duplicate.path, key: duplicate.key, firstLine: lines[duplicate.firstOffset],
                    line: lines[duplicate.offset], firstSpelling: duplicate.firstSpelling))
        }
        for _ in 0..<unlistedDuplicates { result.countUnlisted() }
        return result
    }

    private mutating func parseArray(depth: Int) -> SettingValue? {
        guard depth <= Self.maximumDepth else {
            return fail("dictionaries and arrays nested deeper than \(Self.maximumDepth) levels")
        }
        var array: [SettingValue] = []
        while true {
            guard skipMisc() else { return nil }
            if skipClose("</array>") { return .array(array) }
            path.append(.index(array.count))
            guard let value = parseValue(depth: depth) else { return nil }
            path.removeLast()
            array.append(value)
        }
    }

    // MARK: - The structure alone

    /// ``scan(_:)``: the prolog, then the root element, however far it can follow it.
    private mutating func scanDocument() {
        guard skipProlog() else { return }
        let start = position
        guard let (tag, isEmpty) = readOpenTag() else { return }
        if tag == .plist {
            guard !isEmpty, skipMisc() else { return }
            _ = scanValue(depth: 0)
        } else {
            // A bare root element: where its opening tag starts, not where it ends (a bare
            // `<data/>` must be found where it stands; the fuzzer found it was not).
            _ = scanValue(tag: tag, isEmpty: isEmpty, start: start, depth: 0)
        }
    }

    private mutating func scanValue(depth: Int) -> Bool {
        let start = position
        guard let (tag, isEmpty) = readOpenTag() else { return false }
        return scanValue(tag: tag, isEmpty: isEmpty, start: start, depth: depth)
    }

    /// Skips an element whose opening tag (at `start`) has been read, recording duplicate keys
    /// in its dictionaries and its empty `<data/>` elements.
    private mutating func scanValue(tag: Tag, isEmpty: Bool, start: Int, depth: Int) -> Bool {
        if isEmpty {
            if tag == .data { emptyData.append(start..<position) }
            return tag != .key && tag != .plist
        }
        switch tag {
        case .dict: return scanDictionary(depth: depth + 1)
        case .array: return scanArray(depth: depth + 1)
        case .string: return skipText(close: "</string>")
        case .integer: return skip(past: "</integer>")
        case .real: return skip(past: "</real>")
        case .true: return skip(past: "</true>")
        case .false: return skip(past: "</false>")
        case .date: return skip(past: "</date>")
        case .data: return skip(past: "</data>")
        case .key, .plist: return false
        }
    }

    private mutating func scanDictionary(depth: Int) -> Bool {
        guard depth <= Self.maximumDepth else { return false }
        // Each key (one per ``KeyIdentity``) -> its copies: their elements, and whether they are
        // spelled in more than one Unicode form.
        var seen: [String: (elements: [Range<Int>], mixed: Bool)] = [:]
        let firstKey = openKeys.count
        while true {
            guard skipMisc() else { return false }
            if skipClose("</dict>") {
                openKeys.removeSubrange(firstKey...)
                for (_, copies) in seen where copies.mixed {
                    let last = copies.elements[copies.elements.count - 1]
                    for element in copies.elements.dropLast() {
                        keyRewrites.append(KeyRewrite(range: element, replacement: last))
                    }
                }
                return true
            }
            let keyOffset = position
            guard let key = readKey() else { return false }
            openKeys.append((key, keyOffset))
            if let index = seen.index(forKey: key) {
                let mixed = seen.values[index].mixed || !seen.keys[index].utf8.elementsEqual(key.utf8)
                seen.values[index].elements.append(keyOffset..<position)
                seen.values[index].mixed = mixed
                recordDuplicate(firstKey: firstKey)
            } else {
                seen[key] = ([keyOffset..<position], false)
            }
            path.append(.key(openKeys.count - 1))
            guard skipMisc(), scanValue(depth: depth) else { return false }
            path.removeLast()
        }
    }

    private mutating func scanArray(depth: Int) -> Bool {
        guard depth <= Self.maximumDepth else { return false }
        var count = 0
        while true {
            guard skipMisc() else { return false }
            if skipClose("</array>") { return true }
            path.append(.index(count))
            guard scanValue(depth: depth) else { return false }
            path.removeLast()
            count += 1
        }
    }

    /// Moves past the closing tag `close` of text that may hold CDATA sections.
    private mutating func skipText(close: StaticString) -> Bool {
        while position < bytes.count {
            if let length = closingTagLength(close) {
                position += length
                return true
            }
            if hasPrefix("<![CDATA[") {
                guard skip(past: "]]>") else { return false }
            } else {
                position += 1
            }
        }
        return false
    }

    /// Reads `<name>` or `<name/>` for a property-list element, with attributes (which are
    /// ignored, as Foundation ignores them); a failure for anything else.
    private mutating func readOpenTag() -> (Tag, isEmpty: Bool)? {
        tagStart = position
        guard position < bytes.count else { return fail("the file ends where an element was expected") }
        guard bytes[position] == UInt8(ascii: "<") else { return fail("text where an element was expected") }
        let nameStart = position + 1
        var nameEnd = nameStart
        while nameEnd < bytes.count, Self.isLetter(bytes[nameEnd]) { nameEnd += 1 }
        guard nameEnd < bytes.count, nameEnd > nameStart, let tag = tag(from: nameStart, to: nameEnd) else {
            if hasPrefix("</") { return fail("an unexpected closing tag: \(found)") }
            if nameEnd > nameStart {
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd]), as: UTF8.self)
                return fail("unknown element <\(Self.shown(name))>")
            }
            return fail("markup where an element was expected: \(found)")
        }
        position = nameEnd
        if bytes[position] == UInt8(ascii: ">") {
            position += 1
            return (tag, false)
        }
        if hasPrefix("/>") {
            position += 2
            return (tag, true)
        }
        guard Self.isWhitespace(bytes[position]) else { return fail("a malformed tag: \(found)", at: tagStart) }
        // `<plist version="1.0">`: skip the attributes.
        guard skipPastTagEnd(rejecting: [UInt8(ascii: "<")]) else {
            return fail("a tag that is never closed (>)", at: tagStart)
        }
        return (tag, bytes[position - 2] == UInt8(ascii: "/"))
    }

    /// Moves past the first `>`, which ends the current markup; `false` (the input is left to
    /// Foundation) at the end of the input or at a byte in `rejected`. Quotes are not special:
    /// Foundation ends the markup at the first `>` even inside a quoted value (and rejects a `[`
    /// anywhere in a document type), so skipping quoted text would accept what it rejects.
    private mutating func skipPastTagEnd(rejecting rejected: [UInt8]) -> Bool {
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: ">") { return true }
            if rejected.contains(byte) { return false }
        }
        return false
    }

    private func tag(from start: Int, to end: Int) -> Tag? {
        func matches(_ name: StaticString) -> Bool {
            guard name.utf8CodeUnitCount == end - start else { return false }
            let pointer = name.utf8Start
            for offset in 0..<(end - start) where pointer[offset] != bytes[start + offset] { return false }
            return true
        }
        switch bytes[start] {
        case UInt8(ascii: "k"): return matches("key") ? .key : nil
        case UInt8(ascii: "s"): return matches("string") ? .string : nil
        case UInt8(ascii: "d"):
            if matches("dict") { return .dict }
            if matches("date") { return .date }
            if matches("data") { return .data }
            return nil
        case UInt8(ascii: "i"): return matches("integer") ? .integer : nil
        case UInt8(ascii: "r"): return matches("real") ? .real : nil
        case UInt8(ascii: "t"): return matches("true") ? .true : nil
        case UInt8(ascii: "f"): return matches("false") ? .false : nil
        case UInt8(ascii: "a"): return matches("array") ? .array : nil
        case UInt8(ascii: "p"): return matches("plist") ? .plist : nil
        default: return nil
        }
    }

    // MARK: - Text

    /// Reads character data up to the closing tag `close`, which it consumes: entity and
    /// character references and CDATA sections are decoded, everything else is kept exactly.
    private mutating func readText(close: StaticString) -> String? {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") { break }
            position += 1
        }
        guard position < bytes.count else { return fail("the file ends inside a <string> or <key>", at: start) }
        if bytes[position] == UInt8(ascii: "<"), let length = closingTagLength(close) {
            // The common case: plain text, made into a string straight from the bytes.
            var content = UnsafeBufferPointer(rebasing: bytes[start..<position])
            if Self.startsWithByteOrderMark(content) { content = UnsafeBufferPointer(rebasing: content.dropFirst(3)) }
            guard let text = String(validating: content, as: UTF8.self) else {
                return fail("text that is not valid UTF-8", at: start)
            }
            position += length
            return text
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "&") {
                guard appendReference() else { return nil }
            } else if byte == UInt8(ascii: "<") {
                if let length = closingTagLength(close) {
                    position += length
                    let text = Self.startsWithByteOrderMark(scratch) ? scratch.dropFirst(3) : scratch[...]
                    guard let text = String(validating: text, as: UTF8.self) else {
                        return fail("text that is not valid UTF-8", at: start)
                    }
                    return text
                }
                guard appendCDATA() else { return nil }
            } else {
                scratch.append(byte)
                position += 1
            }
        }
        return fail("the file ends inside a <string> or <key>", at: start)
    }

    /// Whether decoded text starts with U+FEFF, which Foundation drops (once) from the start of
    /// every string and key, however it was written: raw, `&#xFEFF;` or in CDATA.
    private static func startsWithByteOrderMark(_ text: some Collection<UInt8>) -> Bool {
        text.starts(with: [0xEF, 0xBB, 0xBF])
    }

    /// Decodes `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#NNN;` or `&#xHH;` into `scratch`.
    private mutating func appendReference() -> Bool {
        let start = position
        for (name, byte) in Self.entities where hasPrefix(name) {
            scratch.append(byte)
            position += name.utf8CodeUnitCount
            return true
        }
        guard hasPrefix("&#") else {
            return failed("an unknown entity \(found) (write & as &amp;)", at: start)
        }
        position += 2
        var radix: UInt32 = 10
        if position < bytes.count, bytes[position] == UInt8(ascii: "x") {
            radix = 16
            position += 1
        }
        var value: UInt32 = 0
        var digits = 0
        while position < bytes.count, let digit = Self.digitValue(bytes[position], radix: radix) {
            value = value * radix + digit
            digits += 1
            position += 1
            // Longer references are unusual (this also bounds `value`).
            guard digits <= 7 else { return failed("a character reference with too many digits", at: start) }
        }
        guard digits > 0, position < bytes.count, bytes[position] == UInt8(ascii: ";") else {
            position = start
            return failed("a malformed character reference \(found)", at: start)
        }
        position += 1
        // NUL and surrogates are no characters of a document (Foundation reads `&#0;` as a space).
        guard value != 0, let scalar = Unicode.Scalar(value) else {
            return failed("a character reference to no character (NUL, a surrogate, or beyond U+10FFFF)", at: start)
        }
        scratch.append(contentsOf: UTF8.encode(scalar)!)
        return true
    }

    /// Copies the content of a `<![CDATA[ ... ]]>` section into `scratch`.
    private mutating func appendCDATA() -> Bool {
        guard hasPrefix("<![CDATA[") else {
            return failed("markup inside a <string> or <key>: \(found) (write < as &lt;)")
        }
        let start = position
        position += 9
        while position < bytes.count {
            if hasPrefix("]]>") {
                position += 3
                return true
            }
            scratch.append(bytes[position])
            position += 1
        }
        return failed("a CDATA section that is never closed (]]>)", at: start)
    }

    /// The bytes up to the next `<`, which must start the closing tag `close`; consumes both.
    private mutating func readContent(close: StaticString) -> UnsafeBufferPointer<UInt8>? {
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "<") { position += 1 }
        guard let length = closingTagLength(close) else {
            let element = String(
                decoding: UnsafeRawBufferPointer(start: close.utf8Start + 2, count: close.utf8CodeUnitCount - 3),
                as: UTF8.self)
            return fail("expected \(close) to close <\(element)>, found \(found)")
        }
        let content = UnsafeBufferPointer(rebasing: bytes[start..<position])
        position += length
        return content
    }

    // MARK: - Numbers, dates and data

    /// A decimal or hexadecimal (`0x1F`) integer with an optional sign, as Foundation reads
    /// them; one beyond `Int` is refused, with its key (a setting's integers are `Int`s).
    private mutating func readInteger() -> Int? {
        let start = position
        guard let content = readContent(close: "</integer>") else { return nil }
        guard !content.isEmpty else { return fail("an empty <integer>", at: start) }
        let text = Self.shown(String(decoding: content, as: UTF8.self))
        var index = 0
        var negative = false
        if content[0] == UInt8(ascii: "-") || content[0] == UInt8(ascii: "+") {
            negative = content[0] == UInt8(ascii: "-")
            index = 1
        }
        var radix: UInt32 = 10
        if index + 1 < content.count, content[index] == UInt8(ascii: "0"),
            content[index + 1] == UInt8(ascii: "x") || content[index + 1] == UInt8(ascii: "X")
        {
            radix = 16
            index += 2
        }
        guard index < content.count else { return fail("the <integer> holds no digits", at: start) }
        var magnitude: UInt64 = 0
        var overflow = false
        while index < content.count {
            guard let digit = Self.digitValue(content[index], radix: radix) else {
                return fail(
                    "the <integer> is not an integer (digits, with a sign or 0x for hexadecimal; no spaces)",
                    at: start)
            }
            let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: UInt64(radix))
            let (next, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
            overflow = overflow || overflow1 || overflow2
            magnitude = next
            index += 1
        }
        let limit = negative ? UInt64(Int.max) + 1 : UInt64(Int.max)
        guard !overflow, magnitude <= limit else {
            failure = nil  // this problem, not an earlier one, with the value's key
            return fail(
                "the integer \(text), outside the range of a setting's integers (\(Int.min) to \(Int.max))",
                at: start)
        }
        return negative ? Int(truncatingIfNeeded: 0 &- magnitude) : Int(magnitude)
    }

    /// The longest `<real>` read: longer is no number anyone writes (it bounds the conversion).
    private static let maximumRealLength = 1024

    /// A real in decimal or exponent notation (`1`, `-0.5`, `.5`, `1.`, `1.5e-3`; beyond
    /// `Double`'s range it is infinite), or `inf`, `infinity` or `nan` in any case with an
    /// optional sign (not for `nan`), as Foundation reads them.
    private mutating func readReal() -> Double? {
        let start = position
        guard let content = readContent(close: "</real>") else { return nil }
        guard !content.isEmpty else { return fail("an empty <real>", at: start) }
        guard content.count <= Self.maximumRealLength else {
            return fail("a <real> of \(content.count) characters, more than \(Self.maximumRealLength)", at: start)
        }
        let text = String(decoding: content, as: UTF8.self)
        switch text.lowercased() {
        case "nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: break
        }
        var index = 0
        func skipDigits() -> Int {
            let start = index
            while index < content.count, Self.digitValue(content[index], radix: 10) != nil { index += 1 }
            return index - start
        }
        if content[0] == UInt8(ascii: "-") || content[0] == UInt8(ascii: "+") { index = 1 }
        var mantissaDigits = skipDigits()
        if index < content.count, content[index] == UInt8(ascii: ".") {
            index += 1
            mantissaDigits += skipDigits()
        }
        var valid = mantissaDigits > 0
        if valid, index < content.count, content[index] == UInt8(ascii: "e") || content[index] == UInt8(ascii: "E") {
            index += 1
            if index < content.count, content[index] == UInt8(ascii: "-") || content[index] == UInt8(ascii: "+") {
                index += 1
            }
            valid = skipDigits() > 0
        }
        guard valid, index == content.count, let value = Double(text) else {
            return fail(
                "the <real> is not a real number (1.5, -2, 1e-3, inf or nan; no spaces)", at: start)
        }
        return value
    }

    /// A date written as `yyyy-MM-ddTHH:mm:ssZ`, the only form property-list writers use.
    private mutating func readDate() -> Date? {
        let start = position
        guard let content = readContent(close: "</date>") else { return nil }
        guard let date = Self.date(content) else {
            return fail("the <date> is not a date (write yyyy-MM-ddTHH:mm:ssZ, in UTC)", at: start)
        }
        return date
    }

    /// `content` as a date, if it is one in the form `yyyy-MM-ddTHH:mm:ssZ`.
    private static func date(_ content: UnsafeBufferPointer<UInt8>) -> Date? {
        guard content.count == 20 else { return nil }
        func number(_ offset: Int, _ length: Int) -> Int? {
            var value = 0
            for index in offset..<(offset + length) {
                guard let digit = Self.digitValue(content[index], radix: 10) else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        func separator(_ offset: Int, _ character: Unicode.Scalar) -> Bool {
            content[offset] == UInt8(ascii: character)
        }
        guard separator(4, "-"), separator(7, "-"), separator(10, "T"), separator(13, ":"), separator(16, ":"),
            separator(19, "Z"), let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            year >= 1, (1...12).contains(month), day >= 1, day <= Self.daysInMonth(month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        // Days since 2001-01-01 in the proleptic Gregorian calendar, as CoreFoundation counts.
        let seconds =
            daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60
            + second
        return Date(timeIntervalSinceReferenceDate: TimeInterval(seconds))
    }

    /// Base64, possibly wrapped over lines; `nil` unless it is strictly valid once the
    /// whitespace is removed (Foundation's decoder is more lenient with broken input).
    private mutating func readData() -> Data? {
        let start = position
        guard let content = readContent(close: "</data>") else { return nil }
        guard let data = base64(content) else {
            return fail(
                "the <data> is not valid base64 (A-Z, a-z, 0-9, + and /, in groups of 4, = only at the end)", at: start)
        }
        return data
    }

    /// Strict base64 once whitespace is removed, into `scratch`.
    private mutating func base64(_ content: UnsafeBufferPointer<UInt8>) -> Data? {
        scratch.removeAll(keepingCapacity: true)
        for byte in content where !Self.isWhitespace(byte) { scratch.append(byte) }
        guard scratch.count % 4 == 0 else { return nil }
        // Padding only at the very end, at most two: `Data(base64Encoded:)` also takes `=` elsewhere
        // in the last group (`aGVsbG=8`, `====`) and decodes it differently from Foundation's
        // property-list parser.
        let padding = scratch.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2, !scratch.dropLast(padding).contains(UInt8(ascii: "=")) else { return nil }
        return Data(base64Encoded: Data(scratch))
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 2001-01-01 to the given date (Howard Hinnant's `days_from_civil`, shifted).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        // 730_791 days lie between 0000-03-01 and 2001-01-01.
        return era * 146_097 + dayOfEra - 730_791
    }

    // MARK: - After the root element

    private mutating func trailingContent() -> Int? {
        if hasPrefix([0xEF, 0xBB, 0xBF]) { position += 3 }
        // The prolog: whitespace, comments (as Foundation reads them there), processing
        // instructions, a document type.
        while true {
            guard skipMisc(inProlog: true), position < bytes.count else { return nil }
            if hasPrefix("<?") {
                position += 2  // `?>` after `<?`, as the parser looks for it
                guard skip(past: "?>") else { return nil }
            } else if hasPrefix("<!DOCTYPE") {
                guard skipDoctypeWithSubset() else { return nil }
            } else {
                break
            }
        }
        guard bytes[position] == UInt8(ascii: "<") else { return nil }
        // The root element: count open elements until it closes.
        var depth = 0
        repeat {
            while position < bytes.count, bytes[position] != UInt8(ascii: "<") { position += 1 }
            guard position < bytes.count else { return nil }
            if hasPrefix("<!--") {
                position += 4
                guard skip(past: "-->") else { return nil }
            } else if hasPrefix("<![CDATA[") {
                guard skip(past: "]]>") else { return nil }
            } else if hasPrefix("<?") {
                position += 2
                guard skip(past: "?>") else { return nil }
            } else if hasPrefix("<!") {
                return nil
            } else if hasPrefix("</") {
                guard skip(past: ">") else { return nil }
                depth -= 1
            } else {
                guard skip(past: ">") else { return nil }
                if bytes[position - 2] != UInt8(ascii: "/") { depth += 1 }
            }
        } while depth > 0
        // Only whitespace and comments may follow; an unterminated comment is not one.
        while position < bytes.count {
            if Self.isWhitespace(bytes[position]) {
                position += 1
            } else if hasPrefix("<!--") {
                let start = position
                position += 4
                guard skip(past: "-->") else { return start }
            } else {
                return position
            }
        }
        return nil
    }

    /// Moves past the next `terminator`; `false` if there is none.
    private mutating func skip(past terminator: StaticString) -> Bool {
        while position < bytes.count {
            if hasPrefix(terminator) {
                position += terminator.utf8CodeUnitCount
                return true
            }
            position += 1
        }
        return false
    }

    /// Skips `<!DOCTYPE ...>`, including an internal subset in `[...]`.
    private mutating func skipDoctypeWithSubset() -> Bool {
        var inSubset = false
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "[") { inSubset = true }
            if byte == UInt8(ascii: "]") { inSubset = false }
            if byte == UInt8(ascii: ">"), !inSubset { return true }
        }
        return false
    }

    // MARK: - Markup

    /// Skips whitespace and comments; `false` on an unterminated comment.
    ///
    /// Before the root element Foundation looks for the closing `-->` only from the second
    /// character of the comment on, so it rejects an empty comment `<!---->` there (and accepts
    /// it everywhere else): `inProlog` does the same.
    private mutating func skipMisc(inProlog: Bool = false) -> Bool {
        while position < bytes.count {
            if Self.isWhitespace(bytes[position]) {
                position += 1
            } else if hasPrefix("<!--") {
                let start = position
                position += inProlog ? 5 : 4
                while position < bytes.count, !hasPrefix("-->") { position += 1 }
                guard position < bytes.count else { return failed("a comment that is never closed (-->)", at: start) }
                position += 3
            } else {
                break
            }
        }
        return true
    }

    /// Skips `<?xml...?>` (the declaration, or an instruction whose name starts with `xml`);
    /// `false` when it is not closed or names an encoding other than UTF-8.
    private mutating func skipDeclaration() -> Bool {
        guard hasPrefix("<?xml") else { return false }
        let start = position
        while position < bytes.count, !hasPrefix("?>") { position += 1 }
        guard position < bytes.count else { return failed("the XML declaration is never closed (?>)", at: start) }
        let declaration = UnsafeBufferPointer(rebasing: bytes[start..<position])
        position += 2
        // Find `encoding = "..."`.
        let name = Array("encoding".utf8)
        guard
            let found = (0..<declaration.count).first(where: { offset in
                offset + name.count <= declaration.count
                    && name.indices.allSatisfy { declaration[offset + $0] == name[$0] }
            })
        else { return true }
        var index = found + name.count
        while index < declaration.count, isWhitespace(declaration[index]) { index += 1 }
        let malformed = "a malformed encoding in the XML declaration"
        guard index < declaration.count, declaration[index] == UInt8(ascii: "=") else {
            return failed(malformed, at: start)
        }
        index += 1
        while index < declaration.count, isWhitespace(declaration[index]) { index += 1 }
        guard index < declaration.count else { return failed(malformed, at: start) }
        let quote = declaration[index]
        guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return failed(malformed, at: start) }
        let valueStart = index + 1
        guard let valueEnd = (valueStart..<declaration.count).first(where: { declaration[$0] == quote }) else {
            return failed(malformed, at: start)
        }
        let value = String(decoding: UnsafeBufferPointer(rebasing: declaration[valueStart..<valueEnd]), as: UTF8.self)
        guard value.lowercased() == "utf-8" else {
            let shown = Self.shown(value)
            return failed(
                "the file declares the encoding \(shown); only UTF-8 is read (convert it: iconv -f \(shown) -t UTF-8)",
                at: start)
        }
        return true

        func isWhitespace(_ byte: UInt8) -> Bool { Self.isWhitespace(byte) }
    }

    /// Skips `<!DOCTYPE ...>`; `false` if it has an internal subset (`[...]`).
    private mutating func skipDoctype() -> Bool {
        position += 9
        return skipPastTagEnd(rejecting: [UInt8(ascii: "["), UInt8(ascii: "<")])
    }

    /// Consumes the closing tag `close` if it comes next.
    private mutating func skipClose(_ close: StaticString) -> Bool {
        guard let length = closingTagLength(close) else { return false }
        position += length
        return true
    }

    /// The length of the closing tag `close` (`</key>`) at the current position, also with
    /// whitespace before its `>` (`</key >`, which XML allows and Foundation reads); `nil` if
    /// it does not come next.
    private func closingTagLength(_ close: StaticString) -> Int? {
        let count = close.utf8CodeUnitCount
        if hasPrefix(close) { return count }
        let nameEnd = position + count - 1  // without the `>`
        guard nameEnd < bytes.count else { return nil }
        let pointer = close.utf8Start
        for offset in 0..<(count - 1) where pointer[offset] != bytes[position + offset] { return nil }
        var index = nameEnd
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
        guard index > nameEnd, index < bytes.count, bytes[index] == UInt8(ascii: ">") else { return nil }
        return index + 1 - position
    }

    private func hasPrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        let pointer = prefix.utf8Start
        for offset in 0..<count where pointer[offset] != bytes[position + offset] { return false }
        return true
    }

    private func hasPrefix(_ prefix: [UInt8]) -> Bool {
        guard position + prefix.count <= bytes.count else { return false }
        return prefix.indices.allSatisfy { bytes[position + $0] == prefix[$0] }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func digitValue(_ byte: UInt8, radix: UInt32) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
