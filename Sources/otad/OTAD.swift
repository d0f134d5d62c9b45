import ArgumentParser
import OTAVersion

@main
struct OTAD: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "otad",
    abstract: "The BlueOTA device daemon: receives firmware into the inactive A/B slot.",
    discussion: """
      otad serves the OTA protocol over Bluetooth (through bluetoothd) or over the simulated BLE link
      on a Unix socket, and writes images into the slot it is not running from, with a durable
      journal so that a transfer survives disconnects, restarts and power cuts. A new image boots on
      trial: a health check (or mark-good) keeps it; a failed trial rolls back (docs/BOOT.md).

      Examples:
        otad run --slot-a /var/lib/otad/a.img --slot-b /var/lib/otad/b.img --capacity 16MiB \\
                 --state-dir /var/lib/otad --socket /tmp/otad.sock --health-check ./check.sh
        otad run --config /etc/otad/otad.toml
        otad boot --config /etc/otad/otad.toml       # once per boot, with [boot] stage = "separate"
        otad mark-good --config /etc/otad/otad.toml
        otad status --config /etc/otad/otad.toml --json
        otad adopt --config /etc/otad/otad.toml --image-version 1.0.0   # a slot flashed by hand
        otad fault --config /etc/otad/otad.toml add drop-link after=37%  # a test device only
        otad inhibit --why "printing job 17" -- ./print-job 17     # no update activates meanwhile
        otad consent --config /etc/otad/otad.toml accept           # with [activation] require-consent

      Exit codes (docs/OTAD.md): \(OtadExitCode.helpList).
      """,
    version: BlueOTAVersion.line("otad"),
    subcommands: [
      RunCommand.self, BootCommand.self, MarkGoodCommand.self, MarkBadCommand.self, StatusCommand.self,
      AdoptCommand.self, FaultCommand.self, ConsentCommand.self, InhibitCommand.self,
    ])
}
