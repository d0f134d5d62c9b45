import OTAWire

/// Wraps a payload into an MCUboot image laid out exactly as `imgtool sign --pad-header` does:
///
///     header (32 bytes) | fill up to hdr_size | payload | [protected TLVs: SEC_CNT] | unprotected TLVs
///
/// The unprotected area holds SHA256 of everything before it, then KEYHASH (or PUBKEY) and the
/// signature when a key is given. With the same inputs and an Ed25519 key the result is
/// byte-identical to imgtool's (Ed25519 signatures are deterministic; ECDSA ones are not).
///
/// Encrypted for a device key (`encryptFor`), as `imgtool sign --encrypt`: the payload is padded
/// with zeros to a whole AES block, the header carries IMAGE_F_ENCRYPTED_AES128 or _AES256, the
/// hash and signature cover the plaintext, a fresh AES key is wrapped for the device in an ENC_*
/// TLV after the signature, and the payload is encrypted with AES-CTR.
public struct MCUbootImageBuilder: Sendable {
  /// 0x200: the payload then starts on a 512-byte boundary (a disk sector; on Cortex-M the vector
  /// table's alignment), the value MCUboot's and Zephyr's examples use and this project's samples.
  public static let defaultHeaderSize = 0x200

  public var version: Version
  /// `hdr_size`: the header and its fill; where the payload starts.
  public var headerSize: Int
  /// `load_addr`; nonzero also sets IMAGE_F_RAM_LOAD, as imgtool `--load-addr` does.
  public var loadAddress: UInt32
  /// Adds a protected SEC_CNT TLV when set.
  public var securityCounter: SecurityCounter?
  public var publicKeyFormat: PublicKeyFormat
  /// What fills the header between its 32 bytes and `hdr_size`: 0xff, imgtool's erased-flash
  /// default (its `--erased-val`), unless told otherwise.
  public var headerFill: UInt8
  /// The device key the payload is encrypted for; nil: in clear.
  public var encryptFor: ImageEncryptionKey?
  /// The AES key's length when encrypting: 128 (imgtool's default) or 256.
  public var encryptionKeyBits: Int

  public init(
    version: Version, headerSize: Int = Self.defaultHeaderSize, loadAddress: UInt32 = 0,
    securityCounter: SecurityCounter? = nil, publicKeyFormat: PublicKeyFormat = .hash,
    headerFill: UInt8 = 0xff, encryptFor: ImageEncryptionKey? = nil, encryptionKeyBits: Int = 128
  ) {
    self.encryptFor = encryptFor
    self.encryptionKeyBits = encryptionKeyBits
    self.version = version
    self.headerSize = headerSize
    self.loadAddress = loadAddress
    self.securityCounter = securityCounter
    self.publicKeyFormat = publicKeyFormat
    self.headerFill = headerFill
  }

  /// The whole image; signed when `signingKey` is given, else only hashed.
  public func build(payload: [UInt8], signingKey: ImageSigningKey? = nil) throws(ImageError) -> [UInt8] {
    var contentKey: ImageContentKey?
    var payload = payload
    if encryptFor != nil {
      guard let key = ImageContentKey.random(bits: encryptionKeyBits) else {
        throw .malformed("an image's AES key is 128 or 256 bits, not \(encryptionKeyBits)")
      }
      contentKey = key
      payload += [UInt8](repeating: 0, count: (16 - payload.count % 16) % 16)
    }
    let protectedArea = try protectedTLVArea()
    var header = try makeHeader(
      payloadCount: payload.count, protectedTLVSize: protectedArea?.totalLength ?? 0)
    if let contentKey { header.flags.insert(contentKey.headerFlag) }

    var image: [UInt8] = []
    image.reserveCapacity(headerSize + payload.count + 1024)
    header.append(to: &image)
    image.append(contentsOf: repeatElement(headerFill, count: headerSize - MCUbootHeader.byteCount))
    image.append(contentsOf: payload)
    protectedArea?.append(to: &image)
    var wrapped: [MCUbootTLV] = []
    if let encryptFor, let contentKey {
      do {
        wrapped = [try encryptFor.wrap(contentKey)]
      } catch {
        throw .key(error)
      }
    }
    let unprotectedArea = try UnprotectedTLVs.seal(
      hashedBytes: image[...], signingKey: signingKey, publicKeyFormat: publicKeyFormat, extra: wrapped)
    if let contentKey {
      let range = headerSize..<headerSize + payload.count
      image.replaceSubrange(range, with: contentKey.crypt(Array(image[range]), atPayloadOffset: 0))
    }
    unprotectedArea.append(to: &image)
    return image
  }

  /// The header for a payload of `payloadCount` bytes, once every size is known to fit its field.
  func makeHeader(payloadCount: Int, protectedTLVSize: UInt16) throws(ImageError) -> MCUbootHeader {
    guard headerSize >= MCUbootHeader.byteCount else { throw .headerSizeTooSmall(headerSize) }
    guard let encodedHeaderSize = UInt16(exactly: headerSize) else { throw .headerSizeTooLarge(headerSize) }
    guard let imageSize = UInt32(exactly: payloadCount) else { throw .payloadTooLarge(payloadCount) }
    let header = MCUbootHeader(
      loadAddress: loadAddress, headerSize: encodedHeaderSize, protectedTLVSize: protectedTLVSize,
      imageSize: imageSize, flags: loadAddress != 0 ? .ramLoad : [], version: version)
    guard header.hashedLength <= UInt64(UInt32.max) else { throw .imageTooLarge(header.hashedLength) }
    return header
  }

  /// SEC_CNT when a counter is set (imgtool puts nothing else there for these options), else none.
  private func protectedTLVArea() throws(ImageError) -> MCUbootTLVArea? {
    guard let securityCounter else { return nil }
    var value: [UInt8] = []
    value.appendU32(securityCounter.resolved(for: version))
    do {
      return try MCUbootTLVArea(kind: .protected, entries: [MCUbootTLV(type: .securityCounter, value: value)])
    } catch {
      throw .malformed(error.reason)
    }
  }
}
