/// The long reads (Info, the block hashes): BlueZ reads the whole value itself, but an answer that
/// fills a read response exactly (MTU − 1 bytes) may have more behind it, so the read goes on from
/// there until an answer is short, empty, or the value reaches `infoLimit`.
extension BlueZCentralMachine {
  /// Adds one answer to the read kept at `slot`. Nil when no such read is under way at that offset
  /// (a stale answer); else the bytes so far, the state to read on from, and whether the value is
  /// complete (then the slot is cleared).
  mutating func appendLongRead(
    _ slot: WritableKeyPath<Ready, [UInt8]?>, offset: Int, _ bytes: [UInt8]
  ) -> (read: [UInt8], ready: Ready, complete: Bool)? {
    guard case .ready(var ready) = phase, var read = ready[keyPath: slot], offset == read.count else {
      return nil
    }
    read += bytes
    let complete = bytes.isEmpty || bytes.count != ready.mtu - 1 || read.count >= Self.infoLimit
    ready[keyPath: slot] = complete ? nil : read
    phase = .ready(ready)
    return (read, ready, complete)
  }
}
