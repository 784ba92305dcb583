package import Environments
package import Foundation

/// The effective configuration of `snapshot` as the JSON document its declaration's schema
/// describes (keys sorted): dates in ISO 8601, data in Base64.
package func effectiveJSON(of snapshot: EnvironmentSnapshot) throws -> Data {
    func json(_ value: SettingValue) -> Any {
        switch value {
        case .string(let text): text
        case .integer(let integer): integer
        case .real(let real): real
        case .bool(let bool): bool
        case .date(let date): date.formatted(.iso8601)
        case .data(let data): data.base64EncodedString()
        case .array(let elements): elements.map(json)
        case .dictionary(let entries): entries.mapValues(json)
        }
    }
    return try JSONSerialization.data(withJSONObject: snapshot.values.mapValues(json), options: [.sortedKeys])
}

/// Validates each JSON file of `documents` against the JSON Schema 2020-12 file `schema` with
/// Python's `jsonschema` (an independent implementation: our schema must mean to it what it
/// means to us), after checking the schema itself. Its output says, per document, a line
/// `NAME: valid` or `NAME: ` and the paths of the values that failed, sorted.
///
/// Debian's Python comes first, which `scripts/install-packages.sh` gives `python3-jsonschema`
/// (4.10): a `python3` earlier on `PATH` (pyenv's, say) may have no `jsonschema` on a fresh machine.
package func validateWithPythonJSONSchema(schema: String, documents: [String]) throws
    -> FinishedProcess
{
    let script = """
        import json, sys
        from jsonschema import Draft202012Validator
        schema = json.load(open(sys.argv[1]))
        Draft202012Validator.check_schema(schema)
        validator = Draft202012Validator(schema)
        for name in sys.argv[2:]:
            errors = sorted("/".join(str(p) for p in e.absolute_path) for e in validator.iter_errors(json.load(open(name))))
            print(name.rsplit("/", 1)[-1] + ": " + (", ".join(errors) if errors else "valid"))
        """
    let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
    return try runToEnd("/usr/bin/env", [python, "-c", script, schema] + documents, separately: true)
}
