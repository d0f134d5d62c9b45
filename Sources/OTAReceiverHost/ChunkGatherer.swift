import OTAStorage
import OTAWire

/// Contiguous chunk writes gathered into one slot write. At a small MTU a chunk carries 16 bytes,
/// and one `pwrite` per chunk would cost more than everything else on the ingest path; gathered,
/// a window's chunks reach the slot in a few writes.
///
/// Durability is unchanged: gathered bytes go to the slot before the window's bytes are read back
/// for its CRC, and so before its `fdatasync` and its answer. A gathered write that fails is held
/// as `failure` and answers that window's check (the chunks it carried were told "stored").
struct ChunkGatherer: Sendable {
  /// The most bytes held before they go to the slot.
  let capacity: Int
  private(set) var slot: SlotID?
  private(set) var offset: UInt32 = 0
  private(set) var bytes: [UInt8] = []
  /// Why a gathered write failed, until a window check or a commit reports it.
  private(set) var failure: StorageError?

  init(capacity: Int = 64 * 1024) {
    self.capacity = capacity
    bytes.reserveCapacity(capacity)
  }

  var isEmpty: Bool { bytes.isEmpty }

  /// Whether `count` bytes at `offset` of `slot` continue what is held, within the capacity.
  func continues(_ slot: SlotID, at offset: UInt32, count: Int) -> Bool {
    self.slot == slot && !bytes.isEmpty && UInt64(self.offset) + UInt64(bytes.count) == UInt64(offset)
      && bytes.count + count <= capacity
  }

  /// Holds `chunk` at `offset`: the caller has written out what was held unless `chunk` continues it.
  mutating func hold(_ chunk: ArraySlice<UInt8>, of slot: SlotID, at offset: UInt32) {
    if !continues(slot, at: offset, count: chunk.count) {
      precondition(bytes.isEmpty, "write out what is held before holding a chunk that does not continue it")
      self.slot = slot
      self.offset = offset
    }
    bytes.append(contentsOf: chunk)
  }

  /// Writes what is held to `writer` (the writer of `slot`) and forgets it. A failure is kept for the next `takeFailure()`;
  /// a power cut is thrown, because then nothing after it runs.
  mutating func writeOut(to writer: any SlotWriter) throws(StorageError) {
    guard !bytes.isEmpty else { return }
    let offset = offset
    // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
    let result = bytes.withUnsafeBytes { buffer in
      Result { () throws(StorageError) in try writer.write(buffer, at: UInt64(offset)) }
    }
    bytes.removeAll(keepingCapacity: true)
    switch result {
    case .success: break
    case .failure(.powerCut): throw .powerCut
    case .failure(let error): failure = failure ?? error
    }
  }

  /// Drops what is held and any failure: the transfer it belonged to is being replaced or dropped.
  mutating func discard() {
    bytes.removeAll(keepingCapacity: true)
    failure = nil
  }

  /// The failure of a gathered write since the last call, if any.
  mutating func takeFailure() -> StorageError? {
    defer { failure = nil }
    return failure
  }
}
