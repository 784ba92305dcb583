import Foundation

/// What a process that ran to its end left.
package struct FinishedProcess: Sendable {
    /// Its exit status.
    package var status: Int32
    /// Its standard output.
    package var standardOutput: String
    /// Its standard error (empty when it went to ``standardOutput``).
    package var standardError: String
}

/// The environment of an operator's login shell: this process's, without the variables systemd
/// sets for a unit or that select a configuration, with `extra` added.
package func operatorEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for variable in [
        "CONFIGURATION_DIRECTORY", "CREDENTIALS_DIRECTORY", "RUNTIME_DIRECTORY", "APP_ENVIRONMENT", "APP_INSTANCE",
        "VISUAL", "ENVIRONMENTS_ETCD_ENDPOINTS",
    ] {
        environment[variable] = nil
    }
    environment.merge(extra) { _, new in new }
    return environment
}

/// Runs `executable` to its end with no terminal (stdin from /dev/null).
///
/// - Parameters:
///   - environment: Its environment; `nil` for this process's.
///   - separately: Standard output and standard error apart; else both in ``FinishedProcess/standardOutput``,
///     interleaved as written.
package func runToEnd(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, separately: Bool = false
) throws -> FinishedProcess {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    let error = separately ? Pipe() : output
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    try process.run()
    // Small outputs: reading one pipe to its end cannot block the other's writer.
    let standardOutput = readToEnd(output.fileHandleForReading)
    let standardError = separately ? readToEnd(error.fileHandleForReading) : Data()
    process.waitUntilExit()
    return FinishedProcess(
        status: process.terminationStatus, standardOutput: String(decoding: standardOutput, as: UTF8.self),
        standardError: String(decoding: standardError, as: UTF8.self))
}

extension FinishedProcess {
    /// Everything it wrote: standard output, then standard error.
    package var output: String { standardOutput + standardError }
}
