import ArgumentParser

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

      Exit codes: 0 success, 3 device not reachable, 4 image too large, 5 transfer failed after
      retries, 6 validation failed, 7 rolled back or wrong version after the restart, 8 timed out,
      9 refused by the device or protocol error, 10 image unreadable, 64 bad arguments.
      """,
    subcommands: [
      ScanCommand.self, PushCommand.self, InfoCommand.self, AbortCommand.self, ConfirmCommand.self,
      ImageCommand.self,
    ])
}
