import OTACBOR

/// A request's CBOR body as the commands read it: a map with text keys, unknown keys ignored, a key of
/// the wrong type refused as "invalid value" (rc 3), never guessed at.
public struct SMPBody: Equatable, Sendable {
  public let entries: [CBOR.Entry]

  public init(entries: [CBOR.Entry]) {
    self.entries = entries
  }

  /// Decodes a body: empty bytes are an empty map (some clients send none for a read); anything but
  /// one map within the limits is "invalid value".
  public init(bytes: [UInt8], limits: CBORLimits) throws(SMPFailure) {
    if bytes.isEmpty {
      entries = []
      return
    }
    let item: CBOR
    do {
      item = try CBORDecoder.decode(bytes, limits: limits)
    } catch {
      throw .generic(.invalidValue)
    }
    guard case .map(let entries) = item else { throw .generic(.invalidValue) }
    self.entries = entries
  }

  public subscript(key: String) -> CBOR? {
    entries.first { $0.key == .text(key) }?.value
  }

  public func text(_ key: String) throws(SMPFailure) -> String? {
    guard let value = self[key] else { return nil }
    guard let text = value.textValue else { throw .generic(.invalidValue) }
    return text
  }

  public func unsigned(_ key: String) throws(SMPFailure) -> UInt64? {
    guard let value = self[key] else { return nil }
    guard let number = value.unsignedValue else { throw .generic(.invalidValue) }
    return number
  }

  public func bytes(_ key: String) throws(SMPFailure) -> [UInt8]? {
    guard let value = self[key] else { return nil }
    guard let bytes = value.bytesValue else { throw .generic(.invalidValue) }
    return bytes
  }

  public func bool(_ key: String) throws(SMPFailure) -> Bool? {
    guard let value = self[key] else { return nil }
    guard let flag = value.boolValue else { throw .generic(.invalidValue) }
    return flag
  }
}
