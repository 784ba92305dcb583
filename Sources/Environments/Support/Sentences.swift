/// How messages and hints join into one line, the same for errors and warnings.
enum Sentences {
    /// `text` and then `hint` as a sentence of its own: `"… is not set. Set it"`, or after a
    /// question or a full stop only a space (`"did you mean 'Greeting'? Rename it"`).
    static func joining(_ text: String, hint: String) -> String {
        guard let last = text.last else { return hint }
        return text + (".?!".contains(last) ? " " : ". ") + hint
    }
}
