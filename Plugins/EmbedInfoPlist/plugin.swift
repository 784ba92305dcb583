import Foundation
import PackagePlugin

/// Embeds a target's `Info.plist` into its executable at build time.
///
/// Put an `Info.plist` in the target's directory, exclude it from the target's sources
/// (`exclude: ["Info.plist"]`), and add `plugins: [.plugin(name: "EmbedInfoPlist", package: "swift-environments")]`.
/// The plugin validates the file while building and generates `BuildInfo.embedded`; pass it to
/// `EnvironmentOptions(build: .embedded)`. Nothing is deployed beside the binary.
@main
struct EmbedInfoPlist: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let input = target.directoryURL.appending(path: "Info.plist")
        guard FileManager.default.fileExists(atPath: input.path) else {
            throw PluginError(message: "EmbedInfoPlist: no Info.plist in \(target.directoryURL.path)")
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedInfoPlist.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(input.lastPathComponent) into \(target.name)",
                executable: try context.tool(named: "EmbedInfoPlistTool").url,
                arguments: [input.path, output.path],
                inputFiles: [input],
                outputFiles: [output]
            )
        ]
    }
}

struct PluginError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
