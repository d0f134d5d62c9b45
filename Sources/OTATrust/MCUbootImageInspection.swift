import Crypto
import OTAWire

/// What `otactl image inspect` reports about an MCUboot image: its header, every TLV where it sits,
/// whether its SHA256 TLV matches its bytes, and whether a signature verifies with one of the
/// given public keys (`ImageSignatureCheck`, the device's own decision).
public struct MCUbootImageInspection: Sendable {
  /// One TLV of either area.
  public struct Entry: Sendable, Equatable {
    public let area: MCUbootTLVArea.Kind
    /// Where the TLV's 4-byte type and length start, counted from the image's first byte.
    public let offset: UInt64
    public let type: MCUbootTLVType
    public let value: [UInt8]
  }

  public enum HashCheck: Sendable, Equatable {
    /// The SHA256 TLV holds the SHA-256 of the hashed range, given here.
    case matches([UInt8])
    case mismatch(recorded: [UInt8], computed: [UInt8])
    /// The hash could not be checked; the text says why.
    case uncheckable(String)
  }

  public enum SignatureCheck: Sendable, Equatable {
    /// No public keys were given.
    case notRequested
    case verified(ImagePublicKey)
    /// Keys were given and none verifies; the text says why (as the device would).
    case rejected(String)
    /// Keys were given but the hash is not right, so no signature over it means anything.
    case skipped(String)
  }

  public let layout: MCUbootImageLayout
  /// Bytes in the file: the image, plus `trailingByteCount` after its TLV areas.
  public let fileLength: Int
  public let entries: [Entry]
  public let hash: HashCheck
  public let signature: SignatureCheck
  /// For an encrypted image: whether the given decryption key opened it (the hash and signature are
  /// then checked over the plaintext, as MCUboot checks them), or why not. nil: not encrypted.
  public let decryption: Result<EncryptionAlgorithm, ImageProblem>?

  public var header: MCUbootHeader { layout.header }
  /// Bytes after the unprotected TLV area (slot padding, a trailer); MCUboot ignores them.
  public var trailingByteCount: Int { fileLength - Int(layout.totalLength) }

  /// The protected area's SEC_CNT, as MCUboot reads it; nil when there is none or it is misplaced.
  public var securityCounter: UInt32? { (try? layout.securityCounter()) ?? nil }

  /// Decodes `image` (the whole file) and checks its hash and, when keys are given, its signature;
  /// an encrypted image's over its plaintext, when `decryptionKey` opens it.
  /// Throws only when the bytes are not a well-formed MCUboot image at all.
  public init(image: [UInt8], keys: [ImagePublicKey], decryptionKey: ImageDecryptionKey? = nil)
    throws(ImageError)
  {
    guard MCUbootHeader.looksLikeMCUboot(image) else {
      throw .notMCUboot("it does not start with the magic 0x96f3b83d (a raw payload?)")
    }
    do {
      layout = try MCUbootImageLayout(parsing: image)
    } catch {
      throw .malformed(error.reason)
    }
    fileLength = image.count
    entries = Self.entries(of: layout)

    var image = image
    if layout.header.isEncrypted, let decryptionKey {
      let opened = decryptionKey.unwrap(flags: layout.header.flags, tlvs: layout.unprotectedTLVs)
      decryption = opened.map { _ in decryptionKey.algorithm }
      if case .success(let contentKey) = opened {
        let payload = Int(layout.payloadRange.lowerBound)..<Int(layout.payloadRange.upperBound)
        image.replaceSubrange(payload, with: contentKey.crypt(Array(image[payload]), atPayloadOffset: 0))
      }
    } else if layout.header.isEncrypted {
      decryption = .failure(.cannotDecrypt("no decryption key given (--decryption-key)"))
    } else {
      decryption = nil
    }
    let hashed = image[0..<Int(layout.header.hashedLength)]
    let (hash, digest) = Self.checkHash(layout, hashed: hashed, decryption: decryption)
    self.hash = hash
    signature =
      if keys.isEmpty {
        .notRequested
      } else if let digest {
        switch ImageSignatureCheck.check(layout, digest: digest, trusted: keys) {
        case .verified(let key): .verified(key)
        case .rejected(let reason): .rejected(reason)
        }
      } else {
        .skipped("the image's hash is not right, so its signature was not checked")
      }
  }

  /// True when the structure and hash are good and, if keys were given, a signature verifies.
  public var isGood: Bool {
    guard case .matches = hash else { return false }
    switch signature {
    case .notRequested, .verified: return true
    case .rejected, .skipped: return false
    }
  }

  private static func entries(of layout: MCUbootImageLayout) -> [Entry] {
    var entries: [Entry] = []
    for (area, start) in [
      (layout.protectedArea, layout.protectedTLVRange.lowerBound),
      (Optional(layout.unprotectedArea), layout.unprotectedTLVRange.lowerBound),
    ] {
      guard let area else { continue }
      var offset = start + UInt64(MCUbootTLVArea.infoByteCount)
      for tlv in area.entries {
        entries.append(Entry(area: area.kind, offset: offset, type: tlv.type, value: tlv.value))
        offset += UInt64(tlv.encodedLength)
      }
    }
    return entries
  }

  /// The hash verdict, and the digest when it matches (what the signature must be over).
  private static func checkHash(
    _ layout: MCUbootImageLayout, hashed: ArraySlice<UInt8>,
    decryption: Result<EncryptionAlgorithm, ImageProblem>?
  ) -> (HashCheck, SHA256Digest?) {
    if case .failure(let problem)? = decryption {
      return (.uncheckable("the payload is encrypted and MCUboot hashes the plaintext; \(problem)"), nil)
    }
    let recorded = layout.unprotectedArea.values(of: .sha256)
    guard recorded.count == 1, let value = recorded.first else {
      let others = layout.unprotectedTLVs.map(\.type).filter { ImageHash.isHash($0) && $0 != .sha256 }
      return (
        .uncheckable(
          recorded.count > 1
            ? "the image has \(recorded.count) SHA256 TLVs; MCUboot expects one"
            : others.isEmpty
              ? "the image has no SHA256 TLV"
              : "the image is hashed with \(others[0]); only SHA256 is checked"),
        nil
      )
    }
    let digest = SHA256.hash(data: hashed)
    guard value == Array(digest) else { return (.mismatch(recorded: value, computed: Array(digest)), nil) }
    return (.matches(value), digest)
  }
}
