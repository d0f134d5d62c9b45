import OTAWire

/// What a slot holds, judged from its own bytes with no record to go by: an MCUboot image carries its
/// length, version, SHA-256 and signature, so it can be checked in place; raw bytes cannot.
public enum SlotEvidence: Equatable, Sendable, CustomStringConvertible {
  /// An MCUboot image whose hash (and signature, when the policy asks for one) verify.
  case verified(ImageReport)
  /// An MCUboot header over an image that fails its checks: half-written, damaged or tampered with.
  case invalid(ImageProblem)
  /// No MCUboot header: a raw image, or nothing. Only a recorded length and CRC32 can judge it.
  case unverifiable
  /// The slot could not be read.
  case unreadable(String)

  public var report: ImageReport? { if case .verified(let report) = self { report } else { nil } }

  public var description: String {
    switch self {
    case .verified(let report): "MCUboot image \(report.version), verified"
    case .invalid(let problem): "an image that fails its check (\(problem))"
    case .unverifiable: "no MCUboot header (raw bytes or nothing)"
    case .unreadable(let why): "unreadable (\(why))"
    }
  }
}

extension ImageVerifier {
  /// Checks the image a slot holds by what the image says of itself: its MCUboot header gives its
  /// length, then its SHA-256 and (when `policy` requires one) its signature are checked. Versions
  /// and counters are not compared with anything. Only read failures throw.
  public static func survey<Source: ImageSource>(reader: Source, policy: ImagePolicy) throws(Source.ReadError)
    -> SlotEvidence
  {
    let capacity = reader.capacity
    guard capacity >= UInt64(MCUbootHeader.byteCount) else { return .unverifiable }
    let headerBytes = try reader.read(at: 0, count: MCUbootHeader.byteCount)
    let header: MCUbootHeader
    switch decodeHeader(headerBytes) {
    case nil: return .unverifiable
    case .failure(let problem)?: return .invalid(problem)
    case .success(let decoded)?: header = decoded
    }
    guard header.tlvOffset < capacity else {
      return .invalid(
        .malformed("the header puts the TLV areas at \(header.tlvOffset), past the slot's \(capacity) bytes"))
    }
    let size: UInt64
    switch try readLayout(reader: reader, header: header, end: capacity).layout {
    case .success(let layout): size = layout.totalLength
    case .failure(let problem): return .invalid(problem)
    }
    // One pass: the CRC32 is computed, not compared; the hash and signature are checked.
    switch try verify(
      reader: reader, size: size, expectedCRC: nil, preparedVersion: header.version,
      policy: ImagePolicy(trustedKeys: policy.trustedKeys, allowDowngrade: true), installed: .none)
    {
    case .valid(let report): return .verified(report)
    case .invalid(let problem): return .invalid(problem)
    }
  }
}
