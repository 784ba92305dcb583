/// When two keys are the same: the two rules, each in one place, that every part comparing
/// keys goes through (the property-list parsers and their duplicate-key warnings, `Secrets`,
/// `RestartRequired`, `APP_` variables, declarations and `envctl`).
///
/// - **The same key** (``isSame(_:_:)``): two keys are one key when they are canonically
///   equivalent Unicode text, as Swift compares strings: `"é"` written precomposed (U+00E9)
///   and decomposed (`e` U+0301) is one key, and so are the Kelvin sign `K` (U+212A) and `K`.
///   Case counts: `Host` and `host` are two keys. Two copies of one key in one dictionary of a
///   property list are a duplicate, reported as such, and the last copy (its spelling and its
///   value) is the one read, in XML and binary files alike.
/// - **The same key ignoring case** (``folded(_:)``): where a key is matched without regard to
///   case (the levels of an `APP_` variable, matched to the spellings of the files, defaults,
///   declarations and lists; the `Secrets` list, so that a secret is secret however a layer
///   spells it; "did you mean" suggestions), two keys match when their full Unicode case mappings meet: each is
///   lower-cased, upper-cased and lower-cased again (the standard library's full mappings, which
///   may change a character's length), then compared as the same key. So `Straße`, `STRASSE`
///   and `strasse` match (and the capital `ẞ`), as do `Σσ`, `σς` and `ΣΣ`, `ﬁle` and `FILE`,
///   `ſ` and `s`. Without a locale's tailoring: the Turkish `İ` matches `i̇` (`i` with a dot
///   above), not `i`; the dotless `ı` matches `i` and `I` (all three upper-case to `I`), which
///   only widens what a `Secrets` entry covers.
enum KeyIdentity {
    /// Whether `first` and `second` are the same key: canonically equivalent text (Swift's
    /// `String` equality, which `Dictionary` and `Set` keyed by `String` use too).
    @inline(__always)
    static func isSame(_ first: String, _ second: String) -> Bool {
        first == second
    }

    /// `key` as keys are compared when case is ignored: two keys match when their folded forms
    /// are the same key (``isSame(_:_:)``), and a `Set` or `Dictionary` of folded forms finds
    /// them. ASCII text is lower-cased, byte by byte; other text is lower-cased, upper-cased and
    /// lower-cased again, which brings together every spelling whose case mappings meet (`ẞ`
    /// lower-cases to `ß`, which upper-cases to `SS`).
    static func folded(_ key: String) -> String {
        if key.utf8.allSatisfy({ $0 < 0x80 }) { return key.lowercased() }
        return key.lowercased().uppercased().lowercased()
    }

    /// Whether `first` and `second` are the same key when case is ignored.
    static func isSameIgnoringCase(_ first: String, _ second: String) -> Bool {
        folded(first) == folded(second)
    }
}
