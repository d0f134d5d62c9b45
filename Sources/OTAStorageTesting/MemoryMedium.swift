import OTAStorage
import OTAWire
import Synchronization

/// A whole device's storage in memory (two slots and one record directory) that models power loss,
/// for tests of everything that must survive it.
///
/// Every slot byte and every record exists twice: a volatile version (what reads see now) and a
/// durable version (what a reboot finds). Slot writes change the volatile bytes; `sync` makes them
/// durable. Records go through the same steps as `FileRecordStore` (write temp, sync temp, rename,
/// sync directory; or pwrite and fdatasync in place), each one counted operation. `inject` fails a chosen operation; after a
/// `.powerCut` nothing works until `reboot(seed:)` decides what the cut kept.
///
/// Sendable through a `Mutex` around all state: one operation at a time, like a single disk queue.
public final class MemoryMedium: SlotMedium, RecordStore, Sendable {
  /// The size of each slot in bytes.
  public let slotCapacity: Int
  let state: Mutex<MemoryState>

  /// Two zero-filled slots of `slotCapacity` bytes (durable) and an empty record directory.
  public init(slotCapacity: Int) {
    precondition(slotCapacity >= 0, "a slot cannot have a negative capacity")
    self.slotCapacity = slotCapacity
    state = Mutex(MemoryState(slotCapacity: slotCapacity))
  }

  /// How many operations have been attempted (including failed ones; not those refused while the
  /// power is off, which never reach the medium).
  public var operationCount: Int { state.withLock { $0.operationCount } }
  /// How many operations of `kind` ran so far (refused ones after a power cut not counted).
  public func operationCount(of kind: Operation) -> Int {
    state.withLock { $0.operationCounts[kind, default: 0] }
  }

  /// True between a `.powerCut` fault and `reboot(seed:)`.
  public var isPoweredOff: Bool { state.withLock { $0.isPoweredOff } }

  public func openForReading(_ slot: SlotID) throws(StorageError) -> any SlotReader {
    try requirePower()
    return MemorySlotReader(medium: self, slot: slot)
  }

  public func openForWriting(_ slot: SlotID) throws(StorageError) -> any SlotWriter {
    try requirePower()
    return MemorySlotWriter(medium: self, slot: slot)
  }

  /// Restarts after a power cut (or at any moment, as a crash would) and decides what survived.
  ///
  /// With `seed == nil` every unsynced slot write and directory change is lost. With a seed, a
  /// deterministic pseudo-random subset survives: each unsynced slot write is kept whole, lost or
  /// torn at 512-byte sectors (the write a cut interrupted keeps at most a prefix of its sectors);
  /// unsynced directory changes survive as a prefix in order, as a journaling file system commits
  /// them. A record replaced holds what its temporary file's fsync stored; a record written in place
  /// (`overwrite`) may keep, lose or tear its unsynced writes like a slot.
  /// Afterwards all state is durable, the power is on and the fault plan is empty.
  public func reboot(seed: UInt64?) {
    state.withLock { state in
      var random = seed.map { SeededGenerator(seed: $0) }
      for slot in SlotID.allCases { state.slots[slot].reboot(random: &random) }
      state.directory.reboot(random: &random)
      state.faults = FaultPlan()
      state.isPoweredOff = false
    }
  }

  // MARK: Test helpers (not counted, no faults)

  /// The volatile content of `slot`, all `slotCapacity` bytes: what a read sees now.
  public func slotBytes(_ slot: SlotID) -> [UInt8] {
    state.withLock { $0.slots[slot].current }
  }

  /// The durable content of `slot`: what `reboot(seed: nil)` would leave.
  public func durableSlotBytes(_ slot: SlotID) -> [UInt8] {
    state.withLock { $0.slots[slot].durable }
  }

  /// Sets `slot` to `bytes` followed by zeros, durably (say, the running image). Drops unsynced writes.
  public func fill(_ slot: SlotID, with bytes: [UInt8]) {
    precondition(bytes.count <= slotCapacity, "fill: \(bytes.count) bytes exceed the slot capacity")
    var content = bytes
    content.append(contentsOf: repeatElement(0, count: slotCapacity - bytes.count))
    state.withLock { state in
      state.slots[slot] = MemorySlot(content: content)
    }
  }

  private func requirePower() throws(StorageError) {
    if isPoweredOff { throw .powerCut }
  }

  // MARK: Slot operations, forwarded to by the readers and writers

  func read(_ slot: SlotID, at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    try state.withLock { state throws(StorageError) in
      guard !state.isPoweredOff else { throw .powerCut }
      try SlotBounds.check(offset: offset, count: count, capacity: UInt64(slotCapacity))
      if let fault = try state.begin(.slotRead) {
        try state.fail(fault, operation: "pread", path: slot.memoryPath)
      }
      let start = Int(offset)
      return Array(state.slots[slot].current[start..<start + count])
    }
  }

  func write(_ slot: SlotID, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
    let bytes = [UInt8](bytes)
    try state.withLock { state throws(StorageError) in
      guard !state.isPoweredOff else { throw .powerCut }
      try SlotBounds.check(offset: offset, count: bytes.count, capacity: UInt64(slotCapacity))
      let start = Int(offset)
      switch try state.begin(.slotWrite) {
      case nil:
        state.slots[slot].write(bytes, at: start)
      case .shortWrite:
        let half = bytes.count / 2
        state.slots[slot].write(Array(bytes.prefix(half)), at: start)
        throw .shortWrite(expected: bytes.count, written: half)
      case .powerCut:
        state.slots[slot].interrupt(bytes, at: start)
        try state.fail(.powerCut, operation: "pwrite", path: slot.memoryPath)
      case let fault?:
        try state.fail(fault, operation: "pwrite", path: slot.memoryPath)
      }
    }
  }

  func sync(_ slot: SlotID) throws(StorageError) {
    try state.withLock { state throws(StorageError) in
      if let fault = try state.begin(.slotSync) {
        try state.fail(fault, operation: "fdatasync", path: slot.memoryPath)
      }
      state.slots[slot].sync()
    }
  }

  func prepare(_ slot: SlotID, forImageOf size: UInt64) throws(StorageError) {
    try state.withLock { state throws(StorageError) in
      guard !state.isPoweredOff else { throw .powerCut }
      guard size <= UInt64(slotCapacity) else { throw .tooLarge(size: size, capacity: UInt64(slotCapacity)) }
      if let fault = try state.begin(.slotPrepare) {
        try state.fail(fault, operation: "prepare", path: slot.memoryPath)
      }
    }
  }
}

/// Everything `MemoryMedium` keeps behind its mutex.
struct MemoryState: Sendable {
  var slots: SlotPair<MemorySlot>
  var directory = MemoryDirectory()
  var faults = FaultPlan()
  var operationCount = 0
  var operationCounts: [MemoryMedium.Operation: Int] = [:]
  var isPoweredOff = false

  init(slotCapacity: Int) {
    let zeros = [UInt8](repeating: 0, count: slotCapacity)
    slots = SlotPair(repeating: MemorySlot(content: zeros))
  }
}

extension SlotID {
  /// How errors name a memory slot.
  var memoryPath: String { "memory:slot-\(self)" }
}

/// A reader that forwards to the medium, so every read is counted and can fail.
struct MemorySlotReader: SlotReader {
  let medium: MemoryMedium
  let slot: SlotID

  var capacity: UInt64 { UInt64(medium.slotCapacity) }

  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    try medium.read(slot, at: offset, count: count)
  }
}

/// A writer that forwards to the medium, so every operation is counted and can fail.
struct MemorySlotWriter: SlotWriter {
  let medium: MemoryMedium
  let slot: SlotID

  var capacity: UInt64 { UInt64(medium.slotCapacity) }

  func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    try medium.read(slot, at: offset, count: count)
  }

  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
    try medium.write(slot, bytes, at: offset)
  }

  func sync() throws(StorageError) {
    try medium.sync(slot)
  }

  func prepare(forImageOf size: UInt64) throws(StorageError) {
    try medium.prepare(slot, forImageOf: size)
  }
}
