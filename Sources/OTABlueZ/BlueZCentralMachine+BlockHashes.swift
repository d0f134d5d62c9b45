import OTADBus

/// The long read of the running slot's block hashes (d3df0006-…), as Info's: BlueZ reads the whole
/// value, but an answer that fills a read response may have more behind it.
extension BlueZCentralMachine {
  mutating func readBlockHashes() {
    guard case .ready(var ready) = phase, ready.blockHashesRead == nil else { return }
    guard ready.characteristics.blockHashes != nil else {
      // A device from before data operations: nothing to read.
      out.append(.emit(.blockHashes([])))
      return
    }
    ready.blockHashesRead = []
    phase = .ready(ready)
    readBlockHashes(at: 0, ready)
  }

  mutating func readBlockHashes(at offset: Int, _ ready: Ready) {
    guard let path = ready.characteristics.blockHashes else { return }
    let options: [String: DBusValue] = offset == 0 ? [:] : ["offset": .uint16(UInt16(clamping: offset))]
    start(
      .readBlockHashes(offset: offset),
      BlueZRequest(
        path: path, interface: BlueZ.gattCharacteristic, method: "ReadValue", arguments: [.vardict(options)]))
  }

  mutating func blockHashesRead(offset: Int, _ bytes: [UInt8]) {
    guard let (read, ready, complete) = appendLongRead(\.blockHashesRead, offset: offset, bytes) else {
      return
    }
    if complete { out.append(.emit(.blockHashes(read))) } else { readBlockHashes(at: read.count, ready) }
  }

  mutating func blockHashesUnavailable() {
    guard case .ready(var ready) = phase, ready.blockHashesRead != nil else { return }
    ready.blockHashesRead = nil
    phase = .ready(ready)
    out.append(.emit(.blockHashes([])))
  }
}
