/// A data write while features bits 1 and 3 are on: one or more data operations, each after its
/// length (`length u16, operation`), so that the short ones (a 13-byte copy, a small patch) share
/// a write instead of costing one each. A link carries a few writes per connection event whatever
/// their size: a delta of many short operations is bound by their count, not by its bytes.
public enum PackedOperations {
  /// The length before each operation.
  public static let entryHeaderSize = 2

  /// The operations' encodings, in order; nil when the framing is broken: a length of 0, one that
  /// runs past the write's end, or a byte left over that cannot hold a length.
  public static func split(_ bytes: [UInt8]) -> [ArraySlice<UInt8>]? {
    var entries: [ArraySlice<UInt8>] = []
    var index = 0
    while index < bytes.count {
      guard bytes.count - index >= entryHeaderSize else { return nil }
      let length = Int(bytes[index]) | Int(bytes[index + 1]) << 8
      index += entryHeaderSize
      guard length > 0, length <= bytes.count - index else { return nil }
      entries.append(bytes[index..<index + length])
      index += length
    }
    return entries.isEmpty ? nil : entries
  }

  /// One write holding `operations`, each after its length.
  public static func pack(_ operations: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    for operation in operations {
      bytes.appendU16(UInt16(operation.count))
      bytes += operation
    }
    return bytes
  }
}
