import ArgumentParser
import OTACentral
import OTAVersion

@main
struct OTACtl: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "otactl",
    abstract: "The BlueOTA central: pushes firmware to a device and asks it how it is.",
    discussion: """
      Examples:
        otactl push Images/mcuboot-ed25519-100KiB.bin --device /tmp/otad.sock
        otactl push firmware.bin --version 1.4.0 --device /tmp/otad.sock --link mtu=185,loss=0.02
        otactl info --device /tmp/otad.sock --json

      Exit codes, the same for every command (docs/OTACTL.md): \(OtactlExitCode.helpList).
      """,
    version: BlueOTAVersion.line("otactl"),
    subcommands: [
      ScanCommand.self, PushCommand.self, InfoCommand.self, AbortCommand.self, ConfirmCommand.self,
      ActivateCommand.self,
      ImageCommand.self, DeltaCommand.self, GatewayCommand.self,
    ])
}
