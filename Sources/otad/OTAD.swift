import ArgumentParser

@main
struct OTAD: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "otad",
    abstract: "The BlueOTA device daemon: receives firmware into the inactive A/B slot.",
    discussion: """
      otad serves the OTA protocol on a link (today: the simulated BLE link on a Unix socket) and
      writes images into the slot it is not running from, with a durable journal so that a
      transfer survives disconnects, restarts and power cuts.

      Examples:
        otad run --slot-a /var/lib/otad/a.img --slot-b /var/lib/otad/b.img --capacity 16MiB \\
                 --state-dir /var/lib/otad --socket /tmp/otad.sock
        otad run --config /etc/otad.toml
        otad status --config /etc/otad.toml --json
      """,
    subcommands: [
      RunCommand.self, BootCommand.self, MarkGoodCommand.self, MarkBadCommand.self, StatusCommand.self,
    ])
}
