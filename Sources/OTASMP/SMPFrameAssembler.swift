/// Reassembles SMP messages from a byte stream cut anywhere (SMP over Bluetooth: no framing but the
/// header's length). A header announcing more than `maxBody` is refused at once, so a lying header
/// never makes the assembler wait for, or hold, more than `maxBody` bytes.
public struct SMPFrameAssembler: Sendable {
  public let maxBody: Int
  private var buffer: [UInt8] = []
  /// The header of the last message refused as too large (to answer it: the bytes are gone).
  public private(set) var refusedHeader: [UInt8] = []

  public init(maxBody: Int) {
    self.maxBody = maxBody
  }

  /// Bytes held towards a message not yet complete.
  public var pending: Int { buffer.count }

  /// Adds `bytes`; returns every message now complete (header and body), in order. After an error the
  /// assembler is empty: the stream cannot be trusted to resynchronise, the caller drops the client.
  public mutating func append(_ bytes: some Collection<UInt8>) throws(SMPFrameError) -> [[UInt8]] {
    buffer += bytes
    var messages: [[UInt8]] = []
    while buffer.count >= SMPHeader.byteCount {
      let header: SMPHeader
      do {
        header = try SMPHeader(bytes: buffer)
      } catch {
        buffer.removeAll()
        throw error
      }
      let length = Int(header.length)
      guard length <= maxBody else {
        refusedHeader = Array(buffer[0..<SMPHeader.byteCount])
        buffer.removeAll()
        throw .tooLarge(announced: length, limit: maxBody)
      }
      let total = SMPHeader.byteCount + length
      guard buffer.count >= total else { break }
      messages.append(Array(buffer[0..<total]))
      buffer.removeFirst(total)
    }
    return messages
  }

  /// Forgets a partial message (the client went away).
  public mutating func reset() { buffer.removeAll() }

  /// Hands over the partial message held and forgets it (a message that never completed: the
  /// server answers it as it answers a header whose length lies).
  public mutating func takePending() -> [UInt8] {
    defer { buffer.removeAll() }
    return buffer
  }
}
