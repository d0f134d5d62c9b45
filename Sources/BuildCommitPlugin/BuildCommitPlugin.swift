import Foundation
import PackagePlugin

/// Gives the target it is applied to (OTAVersion) `buildCommit`: the commit the package is built
/// from. A prebuild command, so it runs before every build; Scripts/build-commit.sh asks git and
/// rewrites the file only when the commit changed, so an unchanged commit compiles nothing again.
@main
struct BuildCommitPlugin: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
    let package = context.package.directoryURL
    let output = context.pluginWorkDirectoryURL.appending(path: "BuildCommit")
    return [
      .prebuildCommand(
        displayName: "BuildCommit: the commit of \(package.path)",
        executable: URL(fileURLWithPath: "/bin/sh"),
        arguments: [package.appending(path: "Scripts/build-commit.sh").path, package.path, output.path],
        outputFilesDirectory: output)
    ]
  }
}
