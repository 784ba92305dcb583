import Environments
import Foundation

/// A fresh directory under the system's temporary directory, for one test.
///
/// Use ``withTemporaryDirectory(_:)``, which removes the directory afterwards.
struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    let path: String

    init() throws {
        let base = (NSTemporaryDirectory() as NSString).appendingPathComponent(
            "EnvironmentsTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    /// The absolute path of `relative` inside the directory.
    func path(_ relative: String) -> String {
        (path as NSString).appendingPathComponent(relative)
    }

    /// The main file, `Environments.plist`.
    var mainFile: String { path("Environments.plist") }

    /// Writes `text` to `relative` (creating intermediate directories) and returns the path.
    @discardableResult
    func write(_ relative: String, text: String) throws -> String {
        try write(relative, data: Data(text.utf8))
    }

    /// Writes `data` to `relative` (creating intermediate directories) and returns the path.
    @discardableResult
    func write(_ relative: String, data: Data) throws -> String {
        let file = path(relative)
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Writes an XML property list rendered as text from `root` to `relative` (the main file
    /// unless given) and returns the path.
    @discardableResult
    func writeXML(_ root: [String: Any], to relative: String = "Environments.plist") throws -> String {
        try write(relative, text: Plist.xml(root))
    }

    /// Writes a binary property list made by `PropertyListSerialization` to `relative` (the main
    /// file unless given) and returns the path.
    @discardableResult
    func writeBinary(_ root: [String: Any], to relative: String = "Environments.plist") throws -> String {
        try write(relative, data: Plist.binary(root))
    }

    /// Writes `credentials` (names and texts) into the directory `credentials`, as systemd hands
    /// them to a unit, and returns the process environment that names it
    /// (`CREDENTIALS_DIRECTORY`).
    func writeCredentials(_ credentials: [String: String]) throws -> [String: String] {
        let directory = try makeDirectory("credentials")
        for (name, text) in credentials { try write("credentials/" + name, text: text) }
        return ["CREDENTIALS_DIRECTORY": directory]
    }

    /// Creates the directory `relative` and returns its path.
    @discardableResult
    func makeDirectory(_ relative: String) throws -> String {
        let directory = path(relative)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Options that read this directory, with an explicit (empty unless given) process
    /// environment so that tests never depend on the real one.
    func options(
        environment: String? = nil,
        processEnvironment: [String: String] = [:],
        build: BuildInfo = BuildInfo(defaultEnvironment: "Debug"),
        defaults: [String: SettingValue] = [:],
        secretKeys: Set<String> = [],
        restartRequiredKeys: Set<String> = [],
        validate: (@Sendable (EnvironmentSnapshot) throws -> Void)? = nil
    ) -> EnvironmentOptions {
        EnvironmentOptions(
            applicationName: "environments-tests", environment: environment, configDirectory: path,
            build: build, defaults: defaults, processEnvironment: processEnvironment,
            secretKeys: secretKeys, restartRequiredKeys: restartRequiredKeys, validate: validate)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Runs `body` with a fresh temporary directory and removes it afterwards.
func withTemporaryDirectory<Result>(_ body: (TemporaryDirectory) throws -> Result) throws
    -> Result
{
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try body(directory)
}

/// Runs `body` with a fresh temporary directory and removes it afterwards.
func withTemporaryDirectory<Result>(
    _ body: (TemporaryDirectory) async throws -> Result
) async throws -> Result {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}

/// Writes `root` as the main file of a fresh temporary directory, loads it with the
/// directory's options and runs `body` with the environment and the directory.
func withEnvironment<Result>(
    loading root: [String: Any], _ body: (Environment, TemporaryDirectory) throws -> Result
) throws -> Result {
    try withTemporaryDirectory { directory in
        try directory.writeXML(root)
        return try body(try Environment(options: directory.options()), directory)
    }
}

/// Renders property lists, independently of the module under test.
enum Plist {
    /// An XML property list with one element per line and keys in sorted order: the header's
    /// three lines, then the root `<dict>` on line 4.
    static func xml(_ root: [String: Any]) -> String {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#,
            #"<plist version="1.0">"#,
        ]
        render(root, indent: "", into: &lines)
        lines.append("</plist>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// An element written as it is, for a fixture with one bad element at a known line:
    /// `["Debug": ["Port": Plist.Raw("<integer>eighty</integer>")]]`.
    struct Raw: Sendable {
        let element: String
        init(_ element: String) { self.element = element }
    }

    /// A binary property list.
    static func binary(_ root: [String: Any]) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    private static func render(_ value: Any, indent: String, into lines: inout [String]) {
        switch value {
        case let raw as Raw:
            lines.append(indent + raw.element)
        case let text as String:
            lines.append("\(indent)<string>\(escape(text))</string>")
        case let flag as Bool:
            lines.append("\(indent)<\(flag ? "true" : "false")/>")
        case let number as Int:
            lines.append("\(indent)<integer>\(number)</integer>")
        case let number as Double:
            lines.append("\(indent)<real>\(number)</real>")
        case let values as [Any]:
            lines.append("\(indent)<array>")
            for element in values { render(element, indent: indent + "  ", into: &lines) }
            lines.append("\(indent)</array>")
        case let values as [String: Any]:
            lines.append("\(indent)<dict>")
            for key in values.keys.sorted() {
                lines.append("\(indent)  <key>\(escape(key))</key>")
                render(values[key]!, indent: indent + "  ", into: &lines)
            }
            lines.append("\(indent)</dict>")
        default:
            fatalError("Plist.xml cannot render \(type(of: value))")
        }
    }
}
