import ArgumentParser
import OTATrust
import OTAWire

/// `image create`: wrap a raw payload into an MCUboot image, as `imgtool sign --pad-header`.
struct ImageCreateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "create",
    abstract: "Wrap a payload into an MCUboot image with a version, hashed and optionally signed.",
    discussion: """
      The layout is imgtool's with --pad-header: a header of --header-size bytes (32 filled in, the
      rest 0xff), the payload, a protected TLV area with SEC_CNT when --security-counter is given,
      then SHA256 and, with --key, KEYHASH and the signature. Equivalent:
        imgtool sign --pad-header -H 0x200 -S <slot size> -v 1.2.3+4 -k KEY.pem [-s auto] PAYLOAD OUT

      The default header size, 0x200, starts the payload on a 512-byte boundary (a disk sector, and
      the vector-table alignment MCUboot's Cortex-M examples need); it is what imgtool's examples and
      this project's sample images use.

      With --encrypt DEVICE.pub.pem the payload is encrypted for that device key, as
      `imgtool sign --encrypt` does: padded to a whole AES block, hashed and signed in clear, then
      AES-CTR with a fresh key, wrapped for the device in an ENC_X25519, ENC_EC256 or ENC_RSA2048 TLV
      (or, given a key-wrap key in base64 from `image keygen --type aes-kw`, ENC_KW).

      Example: otactl image create app.bin app.img --version 1.2.3+4 --key release.pem --security-counter auto
               otactl image create app.bin app.img --version 1.2.3 --key release.pem --encrypt device.pub.pem
      """)

  @Argument(help: "The raw payload (the firmware), read as is.")
  var payload: String

  @Argument(help: "Where to write the image (replaced if it exists).")
  var output: String

  @Option(help: "The image's version: major.minor.revision[+build], e.g. 1.2.3+4.")
  var version: Version

  @Option(help: "hdr_size, decimal or 0x hex: where the payload starts (32 to 0xffff).")
  var headerSize = NumberArgument(UInt64(MCUbootImageBuilder.defaultHeaderSize))

  @Option(help: "The private key to sign with (PEM); without it the image is only hashed.")
  var key: String?

  @Option(
    help: ArgumentHelp(
      "Add a security counter (protected SEC_CNT TLV): a number, or auto = (major<<24)|(minor<<16)|revision."
    ))
  var securityCounter: SecurityCounter?

  @Option(help: "load_addr, decimal or 0x hex; nonzero also sets the RAM_LOAD flag (as imgtool --load-addr).")
  var loadAddress = NumberArgument(0)

  @Option(help: "How the image names its key: hash (KEYHASH, the default) or full (PUBKEY).")
  var publicKeyFormat = PublicKeyFormat.hash

  @Option(
    help:
      "Encrypt the payload for this device key (PEM public key: X25519, P-256, RSA-2048; or an AES-KW key).")
  var encrypt: String?

  @Option(help: "The AES key's length with --encrypt: 128 (the default, as imgtool) or 256.")
  var encryptKeylen = 128

  func validate() throws {
    guard encryptKeylen == 128 || encryptKeylen == 256 else {
      throw ValidationError("--encrypt-keylen is 128 or 256, not \(encryptKeylen)")
    }
    guard UInt32(exactly: loadAddress.value) != nil else {
      throw ValidationError("--load-address \(loadAddress) does not fit MCUboot's 32-bit load_addr")
    }
  }

  func run() throws {
    let bytes: [UInt8]
    let signingKey: ImageSigningKey?
    do {
      bytes = try ImageFiles.read(payload, what: "payload")
    } catch {
      throw ImageCommandExit.fail("create", error.message, .imageUnusable)
    }
    let encryptionKey: ImageEncryptionKey?
    do {
      signingKey = try key.map { path throws(ImageFiles.Failure) in try ImageFiles.signingKey(path) }
      encryptionKey = try encrypt.map { path throws(ImageFiles.Failure) in try ImageFiles.encryptionKey(path)
      }
    } catch {
      throw ImageCommandExit.fail("create", error.message, .usage)
    }
    let builder = MCUbootImageBuilder(
      version: version, headerSize: Int(clamping: headerSize.value), loadAddress: UInt32(loadAddress.value),
      securityCounter: securityCounter, publicKeyFormat: publicKeyFormat, encryptFor: encryptionKey,
      encryptionKeyBits: encryptKeylen)
    let image: [UInt8]
    do {
      image = try builder.build(payload: bytes, signingKey: signingKey)
    } catch {
      switch error {
      case .headerSizeTooSmall, .headerSizeTooLarge, .key:
        throw ImageCommandExit.fail("create", "\(error)", .usage)
      default:
        throw ImageCommandExit.fail("create", "\(error)", .imageUnusable)
      }
    }
    do {
      try ImageFiles.writeImage(image, to: output)
    } catch {
      throw ImageCommandExit.fail("create", error.message, .cannotWrite)
    }
    let counter = builder.securityCounter.map { ", security counter \($0.resolved(for: version))" } ?? ""
    print(
      "\(output): MCUboot image \(version), \(image.count) bytes (payload \(bytes.count) at 0x"
        + "\(String(headerSize.value, radix: 16)))\(counter), "
        + (signingKey.map { "signed with the \($0.publicKey)" } ?? "unsigned")
        + (encryptionKey.map { ", encrypted (AES-\(encryptKeylen)) for the \($0.algorithm) device key" } ?? "")
    )
  }
}
