import ArgumentParser
import OTATrust

/// `image sign`: sign an existing MCUboot image (again) with a key.
struct ImageSignCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sign",
    abstract: "Sign an existing MCUboot image with a key, replacing any signature it had.",
    discussion: """
      Header, payload and protected TLVs (version, SEC_CNT) are kept byte for byte, so the digest
      does not change; the unprotected TLVs become SHA256, KEYHASH (or PUBKEY) and the new
      signature; other unprotected TLVs (vendor types) are kept after them. Refused: a raw payload
      (use `create`), an encrypted image, an image whose hash does not match its bytes, and bytes
      after the TLV areas. imgtool has no equivalent: it only signs raw payloads.

      Example: otactl image sign app-unsigned.img app.img --key release.pem
      """)

  @Argument(help: "The MCUboot image to sign.")
  var input: String

  @Argument(help: "Where to write the signed image (may be the input itself).")
  var output: String

  @Option(help: "The private key to sign with (PEM).")
  var key: String

  @Option(help: "How the image names its key: hash (KEYHASH, the default) or full (PUBKEY).")
  var publicKeyFormat = PublicKeyFormat.hash

  func run() throws {
    let image: [UInt8]
    let signingKey: ImageSigningKey
    do {
      image = try ImageFiles.read(input, what: "image")
    } catch {
      throw ImageCommandExit.fail("sign", error.message, .imageUnusable)
    }
    do {
      signingKey = try ImageFiles.signingKey(key)
    } catch {
      throw ImageCommandExit.fail("sign", error.message, .usage)
    }
    let signed: [UInt8]
    do {
      signed = try MCUbootImageSigner.sign(image, with: signingKey, publicKeyFormat: publicKeyFormat)
    } catch {
      throw ImageCommandExit.fail("sign", "\(input): \(error)", .imageUnusable)
    }
    do {
      try ImageFiles.writeImage(signed, to: output)
    } catch {
      throw ImageCommandExit.fail("sign", error.message, .cannotWrite)
    }
    print("\(output): signed with the \(signingKey.publicKey), \(signed.count) bytes")
  }
}
