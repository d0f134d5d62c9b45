/// Bounds a decoder holds an untrusted input to, so that no input costs more than its own size
/// in memory and time.
public struct CBORLimits: Equatable, Sendable {
  /// Nesting of arrays and maps (the top item is depth 1).
  public var maxDepth: Int
  /// Items in the whole input, counting every key, value and array element.
  public var maxItems: Int
  /// Bytes of input.
  public var maxBytes: Int

  public init(maxDepth: Int = 8, maxItems: Int = 1024, maxBytes: Int = 64 * 1024) {
    self.maxDepth = maxDepth
    self.maxItems = maxItems
    self.maxBytes = maxBytes
  }
}
