import Crypto
import OTAChecksum
import OTAWire

/// Checks the image a transfer left in a slot before anything may activate it.
///
/// The slot is streamed once, in chunks, so an image never has to fit in memory: every byte goes
/// into the CRC32 the sender announced and, for an MCUboot image, the hashed range goes into a
/// SHA-256 that must equal the image's SHA256 TLV. The MCUboot header and TLV areas are small and
/// are read (and decoded) first, because they say which bytes to hash; the stream then checks that
/// the slot still holds those very bytes, so that the verdict is about one consistent image.
///
/// Checks, in the order their failures are reported: the CRC (a transfer problem, worth a resend),
/// the structure (header, TLV areas, total length equal to the received size), the hash, the
/// signature when the policy asks for one, then, once the header is known to be authentic, its
/// version against the prepared one, against the confirmed image (downgrade), and its security
/// counter against the device's floor.
public enum ImageVerifier {
  /// - Parameters:
  ///   - size: the bytes received; the image is `[0, size)` of the slot, whatever follows it.
  ///   - expectedCRC: the CRC32 (zlib) the sender announced for those bytes.
  ///   - preparedVersion: the version the sender announced; an MCUboot header must carry it.
  ///   - policy: trusted keys and whether a downgrade is allowed.
  ///   - installed: the confirmed image's version and the device's security counter floor.
  ///   - chunkSize: bytes per streamed read (values below 1 count as 1).
  /// - Returns: the verdict about the bytes. Throws only when the slot cannot be read.
  ///   - sealing: also compute the SHA-256 of all `size` bytes, in the same pass (`ImageReport.seal`):
  ///     what an activation records, so that the boot stage can tell the slot still holds them.
  public static func verify<Source: ImageSource>(
    reader: Source, size: UInt64, expectedCRC: UInt32, preparedVersion: Version,
    policy: ImagePolicy = .integrityOnly, installed: InstalledImage = .none, sealing: Bool = false,
    payload: PayloadView = .asStored, chunkSize: Int = 1 << 20
  ) throws(Source.ReadError) -> ImageVerdict {
    try verify(
      reader: reader, size: size, expectedCRC: Optional(expectedCRC), preparedVersion: preparedVersion,
      policy: policy, installed: installed, sealing: sealing, payload: payload, chunkSize: chunkSize)
  }

  /// As above; with no `expectedCRC` (an image judged by itself, `survey`) the CRC32 is only
  /// computed, in the same single pass.
  static func verify<Source: ImageSource>(
    reader: Source, size: UInt64, expectedCRC: UInt32?, preparedVersion: Version,
    policy: ImagePolicy, installed: InstalledImage, sealing: Bool = false, payload: PayloadView = .asStored,
    chunkSize: Int = 1 << 20
  ) throws(Source.ReadError) -> ImageVerdict {
    guard size > 0 else { return .invalid(.malformed("the image is empty (0 bytes)")) }
    let inspection = try inspect(reader: reader, size: size)
    // An encrypted image as sent: its key unwrapped first, so the one pass sees both views.
    let cipher = payloadCipher(inspection, payload)
    let stream = try StreamedDigests.compute(
      reader: reader, size: size, chunkSize: max(1, chunkSize), inspection: inspection, sealing: sealing,
      cipher: try? cipher?.get())

    if let offset = stream.shortReadAt {
      return .invalid(.malformed("the slot returned fewer bytes than asked at offset \(offset)"))
    }
    if let expectedCRC, stream.crc32 != expectedCRC {
      return .invalid(.crcMismatch(expected: expectedCRC, actual: stream.crc32))
    }
    let layout: MCUbootImageLayout
    switch inspection {
    case .raw:
      guard !policy.requiresSignature else {
        return .invalid(
          .signatureInvalid(
            "a raw image carries no signature; wrap and sign it as an MCUboot image (otactl image create --key)"
          ))
      }
      if let problem = versionProblem(preparedVersion, counter: 0, policy: policy, installed: installed) {
        return .invalid(problem)
      }
      return .valid(
        ImageReport(
          kind: .raw, size: size, crc32: stream.crc32, version: preparedVersion, sha256: nil,
          seal: stream.seal))
    case .invalid(let problem):
      return .invalid(problem)
    case .mcuboot(let decoded, _, _):
      layout = decoded
    }
    guard !stream.slotChanged else {
      return .invalid(
        .malformed("the slot changed while it was verified: header or TLV bytes differ between reads"))
    }
    if case .failure(let problem)? = cipher { return .invalid(problem) }
    let expectedDigest: [UInt8]
    switch expectedSHA256(in: layout) {
    case .success(let digest): expectedDigest = digest
    case .failure(let problem): return .invalid(problem)
    }
    guard let digest = stream.sha256, Array(digest) == expectedDigest else { return .invalid(.hashMismatch) }
    var signer: ImagePublicKey?
    if policy.requiresSignature {
      switch ImageSignatureCheck.check(layout, digest: digest, trusted: policy.trustedKeys) {
      case .verified(let key): signer = key
      case .rejected(let reason): return .invalid(.signatureInvalid(reason))
      }
    }
    let counter: UInt32
    do {
      counter = try layout.securityCounter() ?? 0
    } catch {
      return .invalid(.malformed(error.reason))
    }
    guard layout.header.version == preparedVersion else {
      return .invalid(.versionMismatch(header: layout.header.version, prepared: preparedVersion))
    }
    if let problem = versionProblem(
      layout.header.version, counter: counter, policy: policy, installed: installed)
    {
      return .invalid(problem)
    }
    return .valid(
      ImageReport(
        kind: .mcuboot(layout), size: size, crc32: stream.crc32, version: layout.header.version,
        sha256: Array(digest), securityCounter: counter, signedBy: signer, seal: stream.seal,
        storedCRC32: stream.storedCRC32))
  }

  /// The cipher of the encrypted image of `size` bytes in `reader`, its key unwrapped with `key`:
  /// nil for an image that is not encrypted (or not an MCUboot image); the reason when the key does
  /// not open it.
  public static func payloadCipher<Source: ImageSource>(
    reader: Source, size: UInt64, key: ImageDecryptionKey?
  ) throws(Source.ReadError) -> Result<PayloadCipher, ImageProblem>? {
    payloadCipher(try inspect(reader: reader, size: size), .asSent(key: key, plaintextBelow: 0))
  }

  /// The cipher for an encrypted image checked as sent; nil for any other image or view; the
  /// reason when its key cannot be unwrapped.
  static func payloadCipher(_ inspection: Inspection, _ payload: PayloadView) -> Result<
    PayloadCipher, ImageProblem
  >? {
    guard case .mcuboot(let layout, _, _) = inspection, layout.header.isEncrypted,
      case .asSent(let key, let plaintextBelow) = payload
    else { return nil }
    guard let key else {
      return .failure(
        .cannotDecrypt(
          "the image is encrypted (IMAGE_F_ENCRYPTED_*) and this device has no decryption key to open it"))
    }
    return key.unwrap(flags: layout.header.flags, tlvs: layout.unprotectedTLVs).map {
      let start = UInt64(layout.header.headerSize)
      return PayloadCipher(
        key: $0, payload: start..<start + UInt64(layout.header.imageSize), plaintextBelow: plaintextBelow)
    }
  }

  /// Downgrade and rollback protection: a version below the confirmed one unless allowed, and a
  /// security counter below the device's floor, always.
  static func versionProblem(
    _ version: Version, counter: UInt32, policy: ImagePolicy, installed: InstalledImage
  ) -> ImageProblem? {
    if version < installed.version, !policy.allowDowngrade {
      return .downgrade(image: version, installed: installed.version)
    }
    if counter < installed.securityFloor {
      return .securityCounterBackwards(image: counter, floor: installed.securityFloor)
    }
    return nil
  }

  /// What the first bytes and the TLV areas say, before streaming.
  enum Inspection {
    case raw
    /// A decoded MCUboot image, with the exact header and TLV bytes it was decoded from.
    case mcuboot(MCUbootImageLayout, header: [UInt8], tlvAreas: [UInt8])
    /// Structurally unusable; still streamed, so that a CRC mismatch is reported first.
    case invalid(ImageProblem)
  }

  /// The MCUboot header at the start of `bytes`; nil when they lack its magic (a raw image).
  static func decodeHeader(_ bytes: [UInt8]) -> Result<MCUbootHeader, ImageProblem>? {
    guard MCUbootHeader.looksLikeMCUboot(bytes) else { return nil }
    do {
      var reader = ByteReader(bytes)
      return .success(try MCUbootHeader(from: &reader))
    } catch {
      return .failure(.malformed(error.reason))
    }
  }

  /// Reads and decodes the TLV areas that `header` places, from the bytes before `end` (the
  /// image's received size, or the slot's capacity when the image's own length is sought).
  static func readLayout<Source: ImageSource>(reader: Source, header: MCUbootHeader, end: UInt64)
    throws(Source.ReadError)
    -> (layout: Result<MCUbootImageLayout, ImageProblem>, tlvBytes: [UInt8])
  {
    // Both areas together are at most `maximumTLVAreasLength` bytes: a longer tail cannot be
    // TLVs, and the caller's length check reports it without reading it.
    let tlvCount = min(end - header.tlvOffset, UInt64(MCUbootImageLayout.maximumTLVAreasLength))
    let tlvBytes = try reader.read(at: header.tlvOffset, count: Int(tlvCount))
    do {
      return (.success(try MCUbootImageLayout(header: header, tlvAreas: tlvBytes)), tlvBytes)
    } catch {
      return (.failure(.malformed(error.reason)), tlvBytes)
    }
  }

  /// Reads the header (and for MCUboot the TLV areas, at the offset the header gives) and decodes
  /// them. Only read failures throw; bad bytes become `.invalid`.
  static func inspect<Source: ImageSource>(reader: Source, size: UInt64) throws(Source.ReadError)
    -> Inspection
  {
    let headerBytes = try reader.read(
      at: 0, count: Int(min(size, UInt64(MCUbootHeader.byteCount))))
    let header: MCUbootHeader
    switch decodeHeader(headerBytes) {
    case nil: return .raw
    case .failure(let problem)?: return .invalid(problem)
    case .success(let decoded)?: header = decoded
    }
    guard header.tlvOffset < size else {
      return .invalid(
        .malformed(
          "the image is \(size) bytes but its header puts the TLV areas at offset \(header.tlvOffset) "
            + "(hdr_size \(header.headerSize) + img_size \(header.imageSize))"))
    }
    let (decoded, tlvBytes) = try readLayout(reader: reader, header: header, end: size)
    let layout: MCUbootImageLayout
    switch decoded {
    case .success(let value): layout = value
    case .failure(let problem): return .invalid(problem)
    }
    guard layout.totalLength == size else {
      return .invalid(.sizeMismatch(described: layout.totalLength, received: size))
    }
    return .mcuboot(layout, header: headerBytes, tlvAreas: tlvBytes)
  }

  /// The one SHA256 TLV value to compare against, or why there is none usable.
  static func expectedSHA256(in layout: MCUbootImageLayout) -> Result<[UInt8], ImageProblem> {
    if layout.protectedArea?.values(of: .sha256).isEmpty == false {
      return .failure(
        .malformed("a SHA256 TLV sits in the protected TLV area, inside the range it would hash"))
    }
    let values = layout.unprotectedArea.values(of: .sha256)
    guard let value = values.first else {
      if let other = layout.unprotectedTLVs.first(where: { $0.type == .sha384 || $0.type == .sha512 }) {
        return .failure(.malformed("the image is hashed with \(other.type); only SHA256 is checked here"))
      }
      return .failure(.hashMissing)
    }
    guard values.count == 1 else {
      return .failure(.malformed("the image has \(values.count) SHA256 TLVs; it must have exactly one"))
    }
    guard value.count == SHA256.byteCount else {
      return .failure(
        .malformed("the SHA256 TLV is \(value.count) bytes, expected \(SHA256.byteCount)"))
    }
    return .success(value)
  }
}
