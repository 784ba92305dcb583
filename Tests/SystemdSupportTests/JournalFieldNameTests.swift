import SystemdSupport
import Testing

@Suite struct JournalFieldNameTests {
    @Test(arguments: [
        ("MESSAGE", "MESSAGE"),
        ("request.id", "REQUEST_ID"),
        ("Request-Id", "REQUEST_ID"),
        ("snake_case", "SNAKE_CASE"),
        ("with space", "WITH_SPACE"),
        ("_private", "F__PRIVATE"),
        ("__trusted", "F___TRUSTED"),
        ("9lives", "F_9LIVES"),
        ("0", "F_0"),
        ("", "FIELD"),
        ("_", "F__"),
        ("grüße", "GR__E"),
        ("日本", "F___"),
        ("a=b\nc", "A_B_C"),
        ("X", "X"),
    ])
    func sanitizes(input: String, expected: String) {
        #expect(JournalFieldName.sanitize(input) == expected)
        #expect(JournalFieldName.isValid(expected))
    }

    @Test func truncatesTo64Characters() {
        let long = String(repeating: "abc", count: 40)
        let sanitized = JournalFieldName.sanitize(long)
        #expect(sanitized.count == 64)
        #expect(sanitized == String(String(repeating: "ABC", count: 40).prefix(64)))
    }

    @Test func truncatesAfterPrefixing() {
        let sanitized = JournalFieldName.sanitize(String(repeating: "1", count: 64))
        #expect(sanitized == "F_" + String(repeating: "1", count: 62))
        #expect(JournalFieldName.isValid(sanitized))
    }

    @Test(arguments: ["A", "MESSAGE_ID", "X9_", String(repeating: "A", count: 64)])
    func acceptsValidNames(name: String) {
        #expect(JournalFieldName.isValid(name))
        #expect(JournalFieldName.sanitize(name) == name)
    }

    @Test(arguments: ["", "a", "_A", "1A", "A-B", "A B", "Ä", String(repeating: "A", count: 65)])
    func rejectsInvalidNames(name: String) {
        #expect(!JournalFieldName.isValid(name))
        #expect(JournalFieldName.isValid(JournalFieldName.sanitize(name)))
    }

    @Test func fieldsAndEntriesSanitizeNames() {
        var entry = JournalEntry([("message", "hello")])
        entry.append("config setting", "A=1")
        entry.append("CONFIG_SETTING", "B=2")
        #expect(entry.fields.map(\.name) == ["MESSAGE", "CONFIG_SETTING", "CONFIG_SETTING"])
        #expect(entry.values(named: "config.setting") == ["A=1", "B=2"])
    }
}
