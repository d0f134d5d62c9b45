import OTAStorage
import OTAWire
import Synchronization

/// Wall-clock time spent in each kind of storage call, for the benchmark's breakdown.
final class StorageTimings: Sendable {
  enum Kind: String, CaseIterable { case write, read, sync, record }
  private let totals = Mutex<[String: Duration]>([:])
  private let clock = ContinuousClock()

  func measure<T>(_ kind: Kind, _ body: () throws(StorageError) -> T) throws(StorageError) -> T {
    let start = clock.now
    defer {
      let elapsed = clock.now - start
      totals.withLock { $0[kind.rawValue, default: .zero] += elapsed }
    }
    return try body()
  }

  func total(_ kind: Kind) -> Duration { totals.withLock { $0[kind.rawValue] ?? .zero } }
}

/// A slot medium whose readers and writers report their time to `StorageTimings`.
struct TimedSlotMedium: SlotMedium {
  let inner: any SlotMedium
  let timings: StorageTimings

  func openForReading(_ slot: SlotID) throws(StorageError) -> any SlotReader {
    TimedSlotWriter(reader: try inner.openForReading(slot), writer: nil, timings: timings)
  }

  func openForWriting(_ slot: SlotID) throws(StorageError) -> any SlotWriter {
    let writer = try inner.openForWriting(slot)
    return TimedSlotWriter(reader: writer, writer: writer, timings: timings)
  }
}

struct TimedSlotWriter: SlotWriter {
  let reader: any SlotReader
  let writer: (any SlotWriter)?
  let timings: StorageTimings

  var capacity: UInt64 { reader.capacity }

  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    try timings.measure(.read) { () throws(StorageError) in try reader.read(at: offset, count: count) }
  }

  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
    try timings.measure(.write) { () throws(StorageError) in try requireWriter().write(bytes, at: offset) }
  }

  func sync() throws(StorageError) {
    try timings.measure(.sync) { () throws(StorageError) in try requireWriter().sync() }
  }

  func prepare(forImageOf size: UInt64) throws(StorageError) {
    try requireWriter().prepare(forImageOf: size)
  }

  private func requireWriter() throws(StorageError) -> any SlotWriter {
    guard let writer else { throw .runningSlotIsReadOnly("opened for reading") }
    return writer
  }
}

/// A record store whose calls are timed as `.record`.
struct TimedRecordStore: RecordStore {
  let inner: any RecordStore
  let timings: StorageTimings

  func load(_ name: String) throws(StorageError) -> [UInt8]? {
    try timings.measure(.record) { () throws(StorageError) in try inner.load(name) }
  }
  func replace(_ name: String, with bytes: [UInt8]) throws(StorageError) {
    try timings.measure(.record) { () throws(StorageError) in try inner.replace(name, with: bytes) }
  }
  func overwrite(_ name: String, at offset: Int, with bytes: [UInt8]) throws(StorageError) {
    try timings.measure(.record) { () throws(StorageError) in
      try inner.overwrite(name, at: offset, with: bytes)
    }
  }
  func remove(_ name: String) throws(StorageError) {
    try timings.measure(.record) { () throws(StorageError) in try inner.remove(name) }
  }
  func moveAside(_ name: String) throws(StorageError) {
    try timings.measure(.record) { () throws(StorageError) in try inner.moveAside(name) }
  }
}
