/// The read-only bytes the image checks read: a slot as the storage opens it (OTABoot adapts the
/// storage's `SlotReader`), or bytes in memory in a test. Its failures stay its own: the checks pass
/// them through untouched and judge only the bytes.
public protocol ImageSource {
  associatedtype ReadError: Error
  /// How many bytes there are (a slot's capacity); reads stay below it.
  var capacity: UInt64 { get }
  /// Exactly `count` bytes from `offset`.
  func read(at offset: UInt64, count: Int) throws(ReadError) -> [UInt8]
}
