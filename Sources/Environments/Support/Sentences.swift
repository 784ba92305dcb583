/// How messages are written, the same for errors and warnings: a hint joined to its message in
/// one line, and a name from a file shortened when it is long.
enum Sentences {
    /// `text` and then `hint` as a sentence of its own: `"… is not set. Set it"`, or after a
    /// question or a full stop only a space (`"did you mean 'Greeting'? Rename it"`).
    static func joining(_ text: String, hint: String) -> String {
        guard let last = text.last else { return hint }
        return text + (".?!".contains(last) ? " " : ". ") + hint
    }

    /// A name from a file (a key, a variable, a credential) as an error shows it: whole if it
    /// is short, else its start and its length, so that no error is as long as a file.
    static func shown(_ name: String) -> String {
        guard name.utf8.count > 128 else { return name }
        return String(decoding: name.utf8.prefix(64), as: UTF8.self) + "... (\(name.utf8.count) bytes)"
    }
}
