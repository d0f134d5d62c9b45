/// The bytes that wait for one peer because its socket is full, up to a limit: a peer that stops
/// reading fills it, and is then dropped instead of blocking the loop that writes to it. Pure: the
/// socket writes happen in the link.
public struct OutgoingQueue: Sendable {
  /// The most bytes that may wait.
  public let limit: Int
  private var bytes: [UInt8] = []
  private var start = 0

  public init(limit: Int) { self.limit = limit }

  /// The bytes waiting.
  public var count: Int { bytes.count - start }
  public var isEmpty: Bool { count == 0 }
  /// What to write next.
  public var pending: ArraySlice<UInt8> { bytes[start...] }

  /// Queues `frame` whole, or nothing: false when it would take the queue past `limit` (the peer
  /// is not reading).
  public mutating func append(_ frame: [UInt8]) -> Bool {
    guard count + frame.count <= limit else { return false }
    bytes += frame
    return true
  }

  /// Forgets the first `written` bytes (the socket took them).
  public mutating func consume(_ written: Int) {
    start += min(written, count)
    if start == bytes.count {
      bytes.removeAll(keepingCapacity: true)
      start = 0
    } else if start > 4096, start * 2 > bytes.count {
      bytes.removeFirst(start)
      start = 0
    }
  }
}
