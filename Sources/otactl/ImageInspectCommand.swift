import ArgumentParser
import Foundation
import OTATrust

/// `image inspect`: what an MCUboot image holds, and whether its hash and signature are right.
struct ImageInspectCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "inspect",
    abstract:
      "Print an MCUboot image's header, version and TLVs; check its hash and, with --key, its signature.",
    discussion: """
      The signature is judged as the device judges it: a KEYHASH (or PUBKEY) naming one of the given
      keys, followed by a signature of the image's SHA-256 that verifies with it. Like
      `imgtool dumpinfo IMAGE` plus `imgtool verify -k KEY IMAGE`.

      An encrypted image's hash and signature cover its plaintext: give the device's private key
      (--decryption-key) to check them; without it, or when it does not open the image, exit 15.

      Exit 0 when the structure and hash are good and, if keys were given, a signature verifies;
      10 malformed or not MCUboot; 6 hash mismatch; 11 no signature verifies; 15 cannot decrypt.

      Example: otactl image inspect app.img --key release.pub.pem --json
      """)

  @Argument(help: "The MCUboot image.")
  var image: String

  @Option(
    name: .customLong("key"),
    help: "A public key (or private key file) to check the signature with; repeatable.")
  var keys: [String] = []

  @Option(help: "The device's private key, to open an encrypted image (PEM: X25519, P-256 or RSA-2048).")
  var decryptionKey: String?

  @Flag(help: "Print JSON instead of text.")
  var json = false

  func run() throws {
    let publicKeys: [ImagePublicKey]
    let deviceKey: ImageDecryptionKey?
    let bytes: [UInt8]
    do {
      publicKeys = try keys.map { path throws(ImageFiles.Failure) in try ImageFiles.publicKey(path) }
      deviceKey = try decryptionKey.map { path throws(ImageFiles.Failure) in
        try ImageFiles.decryptionKey(path)
      }
    } catch {
      throw ImageCommandExit.fail("inspect", error.message, .usage)
    }
    do {
      bytes = try ImageFiles.read(image, what: "image")
    } catch {
      throw ImageCommandExit.fail("inspect", error.message, .imageUnusable)
    }
    let inspection: MCUbootImageInspection
    do {
      inspection = try MCUbootImageInspection(image: bytes, keys: publicKeys, decryptionKey: deviceKey)
    } catch {
      throw ImageCommandExit.fail("inspect", "\(image): \(error)", .imageUnusable)
    }
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      print(String(decoding: try encoder.encode(inspection), as: UTF8.self))
    } else {
      print(inspection.text)
    }
    if case .failure(let problem)? = inspection.decryption {
      throw ImageCommandExit.fail("inspect", "\(image): \(problem)", .cannotDecrypt)
    }
    guard case .matches = inspection.hash else {
      throw ImageCommandExit.fail("inspect", "\(image): hash \(inspection.hashSummary)", .validationFailed)
    }
    switch inspection.signature {
    case .notRequested, .verified: return
    case .rejected, .skipped:
      throw ImageCommandExit.fail(
        "inspect", "\(image): signature \(inspection.signatureSummary)", .signatureInvalid)
    }
  }
}
