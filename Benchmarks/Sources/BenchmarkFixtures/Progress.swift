import Foundation

/// Writes a progress line (`... message`) to standard error, where both benchmark executables
/// report what they are doing; their results alone go to standard output.
package func progress(_ message: String) {
    FileHandle.standardError.write(Data("... \(message)\n".utf8))
}

/// Warns on standard error when this is a debug build, whose numbers mean little.
package func warnIfDebugBuild() {
    #if DEBUG
        progress("warning: a debug build; numbers mean little (use swift run -c release)")
    #endif
}
