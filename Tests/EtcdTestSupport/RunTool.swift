#if Fleet
    import Foundation
    import TestSupport

    /// Runs the program at `path` with `arguments` (and `environment`, if given), waits for it,
    /// and returns its exit status and its standard output and error together.
    func runTool(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: readToEnd(output.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
#endif
