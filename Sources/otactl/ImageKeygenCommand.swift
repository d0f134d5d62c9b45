import ArgumentParser
import Foundation
import OTASystem
import OTATrust

/// `image keygen`: a new signing key or device key, as `imgtool keygen` makes it.
struct ImageKeygenCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keygen",
    abstract:
      "Make a signing key or a device key: a PKCS#8 PEM private key (mode 0600) and optionally its public key.",
    discussion: """
      The same files as `imgtool keygen -t TYPE -k KEY` and `imgtool getpub -k KEY -e pem`; either
      tool reads the other's.

      A signing key (ed25519, ecdsa-p256): the public key is what a device trusts ([trust] keys in
      otad's configuration); keep the private key off the device.

      A device key for encrypted images (x25519, rsa-2048, or ecdsa-p256 for P-256): the private key
      goes on the device ([trust] decryption-key, mode 0600); the public key is what images are
      encrypted for (otactl image create --encrypt, imgtool sign --encrypt).

      aes-kw: a 16-byte AES key-wrap key in base64 (MCUboot's ENC_KW, as its enc-aes128kw.b64). It
      is symmetric: the same secret file goes on the device and to whoever encrypts; no --public.

      Examples: otactl image keygen --type ed25519 --key release.pem --public release.pub.pem
                otactl image keygen --type x25519 --key device.pem --public device.pub.pem
      """)

  @Option(
    name: .customLong("type"),
    help: "The key type: ed25519 or ecdsa-p256 (signing), x25519, rsa-2048 or aes-kw (device).")
  var type: KeyType

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
    if publicKey != nil, type == .aesKW {
      throw ValidationError(
        "an aes-kw key has no public half: the one secret file encrypts and decrypts; drop --public")
    }
  }

  func run() throws {
    for path in [key] + (publicKey.map { [$0] } ?? [])
    where !force && FileSystem.exists(path) {
      throw ImageCommandExit.fail("keygen", "\(path) exists; give --force to replace it", .usage)
    }
    let (privatePEM, publicPEM, summary) = try make()
    do {
      try ImageFiles.writeNew(privatePEM, to: key, mode: 0o600, replace: force)
      if let publicKey {
        try ImageFiles.writeNew(publicPEM, to: publicKey, mode: 0o644, replace: force)
      }
    } catch {
      throw ImageCommandExit.fail("keygen", error.message, .cannotWrite)
    }
    print("\(summary): private key \(key)" + (publicKey.map { ", public key \($0)" } ?? ""))
  }

  private func make() throws -> (privatePEM: String, publicPEM: String, summary: String) {
    switch type {
    case .ed25519, .ecdsaP256:
      let algorithm: SigningAlgorithm = type == .ed25519 ? .ed25519 : .ecdsaP256
      let signingKey = ImageSigningKey.generate(algorithm)
      return (signingKey.pem, signingKey.publicKey.pem, "\(algorithm) key \(signingKey.publicKey.shortID)")
    case .x25519, .rsa2048, .aesKW:
      do {
        let deviceKey = try ImageDecryptionKey.generate(
          type == .x25519 ? .x25519 : type == .rsa2048 ? .rsa2048 : .aesKW)
        return (
          deviceKey.pem, deviceKey.encryptionKey.pem, "\(deviceKey.algorithm) device key for encrypted images"
        )
      } catch {
        throw ImageCommandExit.fail("keygen", "\(error)", .usage)
      }
    }
  }
}
