import ArgumentParser
import Foundation
import OTASystem
import OTATrust

/// `image keygen`: a new signing key, as `imgtool keygen` makes it.
struct ImageKeygenCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keygen",
    abstract: "Make a signing key: a PKCS#8 PEM private key (mode 0600) and optionally its public key.",
    discussion: """
      The same files as `imgtool keygen -t TYPE -k KEY` and `imgtool getpub -k KEY -e pem`; either
      tool reads the other's. The public key is what a device trusts ([trust] keys in otad's
      configuration); keep the private key off the device.

      Example: otactl image keygen --type ed25519 --key release.pem --public release.pub.pem
      """)

  @Option(name: .customLong("type"), help: "The key type: ed25519 or ecdsa-p256.")
  var algorithm: SigningAlgorithm

  @Option(help: "Where to write the private key (created with mode 0600).")
  var key: String

  @Option(name: .customLong("public"), help: "Where to write the public key (PEM), if wanted.")
  var publicKey: String?

  @Flag(help: "Replace existing key files.")
  var force = false

  func validate() throws {
    if let publicKey, publicKey == key {
      throw ValidationError("--key and --public name the same file; give two paths")
    }
  }

  func run() throws {
    for path in [key] + (publicKey.map { [$0] } ?? [])
    where !force && FileSystem.exists(path) {
      throw ImageCommandExit.fail("keygen", "\(path) exists; give --force to replace it", .usage)
    }
    let signingKey = ImageSigningKey.generate(algorithm)
    do {
      try ImageFiles.writeNew(signingKey.pem, to: key, mode: 0o600, replace: force)
      if let publicKey {
        try ImageFiles.writeNew(signingKey.publicKey.pem, to: publicKey, mode: 0o644, replace: force)
      }
    } catch {
      throw ImageCommandExit.fail("keygen", error.message, .cannotWrite)
    }
    print(
      "\(algorithm) key \(signingKey.publicKey.shortID): private key \(key)"
        + (publicKey.map { ", public key \($0)" } ?? ""))
  }
}
