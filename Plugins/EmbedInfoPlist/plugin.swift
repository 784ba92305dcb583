import PackagePlugin

@main
struct EmbedInfoPlist: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] { [] }
}
