import Foundation
import TestSupport
import Testing

/// envctl and keys that hold dots (issue 32): `set` and `get` take a component that holds a dot
/// quoted, `show` prints it in the same form (which `get` accepts back), and what `set` writes,
/// Python's `plistlib` and Foundation read back equal.
@Suite(.blocking) struct EnvctlLiteralKeyTests {
    @Test("set, get, unset and show a key inside a map keyed by host names; plistlib reads the drop-in back")
    func hostMap() throws {
        let directory = try ExampleConfigurationDirectory()
        func envctl(_ arguments: [String]) throws -> FinishedProcess {
            try runEnvctl(arguments + ["--config-dir", directory.path])
        }
        let key = #"Upstreams."api.example.com".Port"#
        let set = try envctl(["set", key, "8443", "--type", "integer"])
        #expect(set.status == 0, "\(set.output)")
        let values: [(String, String, String)] = [
            (#"Upstreams."db.example.com".Host"#, "db-1.cluster.example", "string"),
            (#"Bundles."com.example.app.widget".Enabled"#, "yes", "bool"),
            (#"Bundles."com.example.app".Ratio"#, "0.25", "real"),
            ("Text.Unicode", "h\u{e9}llo \u{2603} \"quoted\" <&>", "string"),
            ("Blob.Payload", "AAECAwQ=", "data"),
            ("Blob.Empty", "", "data"),
            ("Stamp.At", "2026-11-26T12:00:00Z", "date"),
        ]
        for (key, value, type) in values {
            let result = try envctl(["set", key, value, "--type", type])
            #expect(result.status == 0, "\(key): \(result.output)")
        }
        let get = try envctl(["get", key, "--environment", "Staging"])
        #expect(get.output == "8443\n", "\(get.output)")
        // The same key quoted more than needed.
        let quoted = try envctl(["get", #""Upstreams"."api.example.com"."Port""#, "--environment", "Staging"])
        #expect(quoted.output == "8443\n", "\(quoted.output)")
        // show prints each path as get takes it back.
        let show = try envctl(["show", "--environment", "Staging"])
        #expect(show.output.contains(#"Upstreams."api.example.com".Port"#), "\(show.output)")
        #expect(show.output.contains(#"Bundles."com.example.app.widget".Enabled"#), "\(show.output)")
        let json = try envctl(["show", "--json", "--environment", "Staging"])
        #expect(json.output.contains(#""Upstreams.\"api.example.com\".Port""#), "\(json.output)")

        // The drop-in, read by Python's plistlib: the host name is one key.
        let script = """
            import json, plistlib, sys, base64, datetime
            def plain(v):
                if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
                if isinstance(v, bytes): return {"data": base64.b64encode(v).decode()}
                if isinstance(v, datetime.datetime): return {"date": v.replace(tzinfo=None).isoformat()}
                if isinstance(v, bool): return {"bool": v}
                if isinstance(v, float): return {"real": v}
                return v
            with open(sys.argv[1], "rb") as f: print(json.dumps(plain(plistlib.load(f)), sort_keys=True))
            """
        let python = try runToEnd("/usr/bin/env", ["python3", "-c", script, directory.dropIn])
        #expect(python.status == 0, "\(python.output)")
        let read = try #require(
            try JSONSerialization.jsonObject(with: Data(python.output.utf8)) as? [String: Any])
        let common = try #require(read["Common"] as? [String: Any])
        let upstreams = try #require(common["Upstreams"] as? [String: Any])
        #expect(Set(upstreams.keys) == ["api.example.com", "db.example.com"])
        #expect((upstreams["api.example.com"] as? [String: Any])?["Port"] as? Int == 8443)
        #expect((upstreams["db.example.com"] as? [String: Any])?["Host"] as? String == "db-1.cluster.example")
        let bundles = try #require(common["Bundles"] as? [String: Any])
        #expect(Set(bundles.keys) == ["com.example.app", "com.example.app.widget"])
        #expect(
            ((bundles["com.example.app"] as? [String: Any])?["Ratio"] as? [String: Any])?["real"] as? Double == 0.25)
        #expect((common["Text"] as? [String: Any])?["Unicode"] as? String == "h\u{e9}llo \u{2603} \"quoted\" <&>")
        let blob = try #require(common["Blob"] as? [String: Any])
        #expect((blob["Payload"] as? [String: Any])?["data"] as? String == "AAECAwQ=")
        #expect((blob["Empty"] as? [String: Any])?["data"] as? String == "")
        #expect(
            ((common["Stamp"] as? [String: Any])?["At"] as? [String: Any])?["date"] as? String == "2026-11-26T12:00:00")
        // Foundation reads the same.
        let foundation = try #require(
            try PropertyListSerialization.propertyList(
                from: Data(contentsOf: URL(fileURLWithPath: directory.dropIn)), format: nil) as? [String: Any])
        let foundationUpstreams = try #require(
            (foundation["Common"] as? [String: Any])?["Upstreams"] as? [String: Any])
        #expect(Set(foundationUpstreams.keys) == ["api.example.com", "db.example.com"])

        let unset = try envctl(["unset", key])
        #expect(unset.status == 0, "\(unset.output)")
        let gone = try envctl(["get", key, "--environment", "Staging"])
        #expect(gone.status != 0)
        let other = try envctl(["get", #"Upstreams."db.example.com".Host"#, "--environment", "Staging"])
        #expect(other.output == "db-1.cluster.example\n")
    }
}
