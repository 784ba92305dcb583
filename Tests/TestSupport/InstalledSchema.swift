import Foundation

/// Runs `body` with the schema file `schema` installed as a package installs it, in
/// `/usr/share/NAME/schema.json` under a new name that starts with `namePrefix` (root only),
/// and removes that directory afterwards.
///
/// - Parameter body: Called with the name (what `--app-name` takes) and the directory.
package func withInstalledSchema<Result>(
    _ schema: String, namePrefix: String, _ body: (_ name: String, _ directory: String) throws -> Result
) throws -> Result {
    let name = "\(namePrefix)-\(UUID().uuidString.prefix(8).lowercased())"
    let directory = "/usr/share/\(name)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try FileManager.default.copyItem(atPath: schema, toPath: directory + "/schema.json")
    return try body(name, directory)
}
