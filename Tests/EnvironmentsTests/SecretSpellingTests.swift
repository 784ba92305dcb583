import Environments
import Foundation
import Testing

/// Secrecy follows a key however it is spelled and whichever layer sets it: `Secrets` entries
/// match paths ignoring case, and a variable's levels match the spelling `Secrets` gives.
@Suite struct SecretSpellingTests {
    @Test("an upper-case variable for a declared secret sets the secret key, redacted")
    func upperCaseVariable() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["Database": ["Host": "db.example"]], "Secrets": ["Database.Password"], "Debug": [:],
            ])
            let environment = try Environment(
                options: directory.options(processEnvironment: ["APP_DATABASE__PASSWORD": "hunter2"]))
            // The application's spelling reads it.
            #expect((try? environment.require("Database.Password", as: String.self)) == "hunter2")
            let entry = try #require(environment.configuredValue(forKey: "Database.Password"))
            #expect(entry.isSecret)
            #expect(environment.snapshot.configuredValue(forKey: "Database.Password")?.displayValue() == "<redacted>")
            #expect(
                environment.snapshot.leafKeys.filter { $0.lowercased() == "database.password" } == ["Database.Password"]
            )
            let shown = environment.snapshot.leafKeys.compactMap {
                environment.snapshot.configuredValue(forKey: $0)?.displayValue()
            }
            #expect(!shown.joined().contains("hunter2"))
        }
    }

    @Test("a key spelled otherwise in any layer is secret too")
    func otherSpellings() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Login": ["token": "t1"]], "Secrets": ["LOGIN.Token"], "Debug": [:]])
            try directory.writeXML(["Common": ["api.KEY": "k1"]], to: "Environments.plist.d/10.plist")
            let environment = try Environment(
                options: directory.options(
                    processEnvironment: ["APP_Other__Secret": "s1"], defaults: ["API.Key": "default"],
                    secretKeys: ["api.key", "other.SECRET"]))
            // The variable takes the spelling Secrets gives (no file spells the key).
            for key in ["Login.token", "api.KEY", "API.Key", "other.SECRET"] {
                let entry = environment.configuredValue(forKey: key)
                #expect(entry?.isSecret == true, "\(key): \(String(describing: entry))")
            }
            try environment.setOverride("o1", forKey: "LOGIN.TOKEN")
            #expect(environment.configuredValue(forKey: "LOGIN.TOKEN")?.isSecret == true)
        }
    }

    @Test("variables in the shapes of Kubernetes service links are not keys; others still are")
    func serviceLinks() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Port": 8080, "Service": ["Host": "svc.example"]], "Debug": [:]])
            let links = [
                "APP_PORT": "tcp://127.0.0.1:80",
                "APP_SERVICE_HOST": "127.0.0.1",
                "APP_SERVICE_PORT": "80",
                "APP_SERVICE_PORT_HTTP": "80",
                "APP_PORT_80_TCP": "tcp://127.0.0.1:80",
                "APP_PORT_80_TCP_PROTO": "tcp",
                "APP_PORT_80_TCP_PORT": "80",
                "APP_PORT_80_TCP_ADDR": "127.0.0.1",
                "APP_PORT_53_UDP": "udp://[::1]:53",
            ]
            let environment = try Environment(options: directory.options(processEnvironment: links))
            #expect(environment.get("Port", default: 0) == 8080)
            #expect(environment.snapshot.leafKeys == ["Port", "Service.Host"])
            // A value that is no link, or a key spelled otherwise, is a setting as before.
            var settings = links
            settings["APP_PORT"] = "9090"
            settings["APP_Service__Host"] = "other.example"
            let set = try Environment(options: directory.options(processEnvironment: settings))
            #expect(set.get("Port", default: 0) == 9090)
            #expect((try? set.require("Service.Host", as: String.self)) == "other.example")
        }
    }
}
