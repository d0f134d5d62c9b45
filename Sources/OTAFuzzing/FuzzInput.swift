/// Takes values off the front of a fuzz input. Never traps and never throws: once the bytes run out
/// every read answers zero, so any input, however short, decodes into some run.
public struct FuzzInput: Sendable {
  private let bytes: [UInt8]
  private var position = 0

  public init(_ bytes: [UInt8]) { self.bytes = bytes }

  public var isExhausted: Bool { position >= bytes.count }
  public var remainingCount: Int { max(0, bytes.count - position) }

  public mutating func byte() -> UInt8 {
    guard position < bytes.count else { return 0 }
    defer { position += 1 }
    return bytes[position]
  }

  public mutating func bool() -> Bool { byte() & 1 == 1 }

  public mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

  public mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }

  /// A value in `range`, from as few bytes as the range needs (one for ranges up to 256 values).
  public mutating func int(in range: ClosedRange<Int>) -> Int {
    let span = UInt64(range.upperBound - range.lowerBound) + 1
    let raw = span <= 256 ? UInt64(byte()) : span <= 65536 ? UInt64(u16()) : UInt64(u32())
    return range.lowerBound + Int(raw % span)
  }

  /// One of `choices`, picked by one byte.
  public mutating func pick<Element>(_ choices: [Element]) -> Element {
    choices[Int(byte()) % choices.count]
  }

  /// Up to `count` bytes (fewer at the end of the input).
  public mutating func bytes(_ count: Int) -> [UInt8] {
    let available = min(max(0, count), remainingCount)
    defer { position += available }
    return Array(bytes[position..<position + available])
  }

  /// Everything not read yet.
  public mutating func rest() -> [UInt8] { bytes(remainingCount) }
}
