import Environments
import Foundation
import Testing

/// Keys inside a dictionary are literal: a map keyed by host names or bundle identifiers reads
/// back as written, through every read; only the keys a section names at its top level are
/// paths (``SettingPath``), and a component that holds a dot is addressed quoted.
@Suite struct LiteralKeyTests {
    struct Upstream: Decodable, Equatable {
        var Port: Int
    }

    static var upstreams: [String: Any] {
        [
            "Common": [
                "Upstreams": ["api.example.com": ["Port": 443], "db.example.com": ["Port": 5432]],
                // As every Xcode export-options file with an app extension has them.
                "provisioningProfiles": ["com.example.app": "App Store", "com.example.app.widget": "Widget"],
                "Database.Host": "localhost",
            ],
            "Debug": [:],
        ]
    }

    @Test("a map keyed by host names reads back literally through every read")
    func hostMap() throws {
        try withTemporaryDirectory { directory in
            for binary in [false, true] {
                if binary {
                    try directory.writeBinary(Self.upstreams)
                } else {
                    try directory.writeXML(Self.upstreams)
                }
                let environment = try Environment(options: directory.options())
                let map = try #require(environment.fetch("Upstreams") as? [String: Any])
                #expect(Set(map.keys) == ["api.example.com", "db.example.com"])
                #expect(environment.get(#"Upstreams."api.example.com".Port"#, default: 0) == 443)
                #expect(environment.get("Upstreams.api.example.com.Port", default: 0) == 0)
                let decoded = try environment.decode([String: Upstream].self, from: "Upstreams")
                #expect(decoded == ["api.example.com": Upstream(Port: 443), "db.example.com": Upstream(Port: 5432)])
                let scoped = environment.scoped("Upstreams")
                #expect(scoped.get(#""db.example.com".Port"#, default: 0) == 5432)
                #expect(environment.scoped(#"Upstreams."db.example.com""#).get("Port", default: 0) == 5432)
                // Quoting more than needed reads the same key.
                #expect((try? environment.require(#""Database".Host"#, as: String.self)) == "localhost")
                #expect((try? environment.require("Database.Host", as: String.self)) == "localhost")
                // A key that is a prefix of another is no conflict.
                #expect(
                    (try? environment.require(#"provisioningProfiles."com.example.app""#, as: String.self))
                        == "App Store")
                #expect(
                    (try? environment.require(#"provisioningProfiles."com.example.app.widget""#, as: String.self))
                        == "Widget")
                // Listings print each path in the form reads accept back.
                let keys = environment.snapshot.leafKeys
                #expect(keys.contains(#"Upstreams."api.example.com".Port"#))
                #expect(keys.contains(#"provisioningProfiles."com.example.app.widget""#))
                for key in keys {
                    #expect(environment.snapshot.configuredValue(forKey: key) != nil, "\(key)")
                    #expect(try SettingPath(parsing: key).description == key)
                }
            }
        }
    }

    @Test("a quoted key at the top of a section is one literal component")
    func quotedTopLevelKey() throws {
        let environment = try Environment(values: [#""api.example.com".Port"#: 443, "Plain": ["a.b": 1]])
        #expect(environment.get(#""api.example.com".Port"#, default: 0) == 443)
        #expect(environment.fetch(#""api.example.com""#) is [String: Any])
        #expect(environment.fetch("api.example.com") == nil)
        #expect(environment.snapshot.values.keys.sorted() == ["Plain", "api.example.com"])
    }

    @Test("the text form of a path: quotes only where needed, and every malformed path refused")
    func textForm() throws {
        let path = try SettingPath(components: ["Upstreams", "api.example.com", "", #"say "hi"\"#])
        #expect(path.description == #"Upstreams."api.example.com".""."say \"hi\"\\""#)
        #expect(try SettingPath(parsing: path.description) == path)
        #expect(try SettingPath(parsing: #""Database"."Port""#).description == "Database.Port")
        for bad in [
            "", ".ListenPort", "ListenPort.", "Database..Port", #"Data"base"#, #""open"#, #""a"b"#, "a.", ".",
        ] {
            let error = try #require(throws: EnvironmentError.self, "\(bad)") { try SettingPath(parsing: bad) }
            #expect(error.code == .invalidKey, "\(bad): \(error)")
        }
    }

    @Test("a leading, trailing or doubled dot in a file is an error naming the key and its line")
    func emptyComponentInAFile() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["ListenPort": 80], "Debug": [:]])
            let environment = try Environment(options: directory.options())
            for key in [".ListenPort", "ListenPort.", "Listen..Port"] {
                let file = try directory.writeXML(["Common": [key: 81]], to: "Environments.plist.d/10.plist")
                let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
                #expect(error.code == .invalidKey, "\(error)")
                #expect(error.file == file)
                let text = try String(contentsOfFile: file, encoding: .utf8)
                let line = text.components(separatedBy: "\n").firstIndex { $0.contains("<key>\(key)</key>") }
                #expect(error.line == line.map { $0 + 1 }, "\(error)")
                #expect(error.message.contains("Common in this drop-in"), "\(error)")
                #expect(environment.get("ListenPort", default: 0) == 80)
            }
            // In the lists too.
            try directory.writeXML(["Secrets": ["Database..Password"]], to: "Environments.plist.d/10.plist")
            let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error.code == .invalidKey)
            #expect(error.message.contains("Secrets"), "\(error)")
        }
    }

    @Test("values and sources of keys that hold dots are separate from the nested path")
    func literalAndNestedSideBySide() throws {
        let environment = try Environment(values: ["A": ["B.C": 1, "B": ["C": 2]]])
        #expect(environment.get(#"A."B.C""#, default: 0) == 1)
        #expect(environment.get("A.B.C", default: 0) == 2)
        #expect(environment.snapshot.leafKeys == [#"A."B.C""#, "A.B.C"])
    }
}
