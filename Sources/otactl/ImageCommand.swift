import ArgumentParser

/// `image`: make, sign and inspect MCUboot images, and make the keys that sign them.
struct ImageCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "image",
    abstract: "Make signing keys and MCUboot images; sign and inspect images (interoperable with imgtool).",
    discussion: """
      Examples:
        otactl image keygen --type ed25519 --key release.pem --public release.pub.pem
        otactl image create app.bin app-1.2.3.img --version 1.2.3+4 --key release.pem --security-counter auto
        otactl image sign app-1.2.3.img app-1.2.3-resigned.img --key other.pem
        otactl image inspect app-1.2.3.img --key release.pub.pem [--json]

      Exit codes (the same for every otactl command): 0 success; 1 an output could not be written;
      10 the input image is unreadable, not an MCUboot image, malformed, or refused for signing;
      6 (inspect) its hash does not match; 11 (inspect) no signature verifies with the given keys;
      64 bad arguments, an unreadable key, or an existing key file without --force. See
      docs/SIGNING.md and `otactl --help` for the whole list.
      """,
    subcommands: [
      ImageKeygenCommand.self, ImageCreateCommand.self, ImageSignCommand.self, ImageInspectCommand.self,
      ImagePackCommand.self,
    ])
}
