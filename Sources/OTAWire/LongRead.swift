/// ATT long reads: a value longer than MTU − 1 is read in pieces, each at an offset.
public enum LongRead {
  /// The piece a server returns for a read at `offset` (ReadValue's offset option): at most MTU − 1
  /// bytes. An offset past the end is an error (ATT's Invalid Offset); exactly the end gives nothing.
  public static func piece(of value: [UInt8], at offset: Int, mtu: Int) throws(WireError) -> ArraySlice<UInt8>
  {
    guard offset >= 0, offset <= value.count else {
      throw .invalidField("read offset \(offset) past the value's \(value.count) bytes")
    }
    let length = min(value.count - offset, max(1, mtu - 1))
    return value[offset..<offset + length]
  }
}

/// Collects the pieces of a long read, in order, until a piece shorter than MTU − 1 ends it.
public struct LongReadAssembler: Sendable {
  public let mtu: Int
  public private(set) var value: [UInt8] = []
  public private(set) var isComplete = false

  public init(mtu: Int) { self.mtu = mtu }

  /// The offset to read next.
  public var nextOffset: Int { value.count }

  /// Adds the piece read at `offset`; it must continue the value exactly where it stands.
  public mutating func add(_ piece: some Collection<UInt8>, at offset: Int) throws(WireError) {
    guard !isComplete else { throw .trailingBytes(count: piece.count) }
    guard offset == value.count else {
      throw .invalidField("piece at offset \(offset), expected \(value.count)")
    }
    guard piece.count <= max(1, mtu - 1) else {
      throw .invalidField("piece of \(piece.count) bytes exceeds MTU − 1 = \(mtu - 1)")
    }
    value.append(contentsOf: piece)
    if piece.count < max(1, mtu - 1) { isComplete = true }
  }
}
