import OTAChecksum
import OTAEngine
import OTAStorage
import OTAWire

/// The device side's IO edge: feeds events to the `ReceiverEngine` and carries out the IO it asks
/// for against `DeviceStorage`, in order, one at a time. Storage failures become statuses on the wire;
/// only a (simulated) power cut escapes, because then the whole process is gone.
public struct ReceiverHost: Sendable {
  public enum Output: Equatable, Sendable {
    case notify([UInt8])
    case armTimer(at: Duration)
    case restart
  }

  public let storage: DeviceStorage
  public private(set) var engine: ReceiverEngine
  public private(set) var boot: BootRecord
  let imageCheck: ImageCheck
  private var writer: (slot: SlotID, writer: any SlotWriter)?

  /// Loads the boot record (a missing or damaged one means a factory device running slot A at
  /// `factoryVersion`) and the journal, and resumes a transfer that was under way.
  public init(
    storage: DeviceStorage, windowCapacity: UInt32 = 64 * 1024, windowGrace: Duration = .milliseconds(400),
    factoryVersion: Version = Version(major: 1, minor: 0, revision: 0), imageCheck: @escaping ImageCheck
  ) throws(StorageError) {
    self.storage = storage
    self.imageCheck = imageCheck
    let boot =
      try storage.loadRecord(BootRecord.recordName) { bytes throws(WireError) in try BootRecord(bytes: bytes)
      }
      ?? BootRecord.factory(runningVersion: factoryVersion)
    self.boot = boot
    let journal = try storage.loadRecord(TransferJournal.recordName) { bytes throws(WireError) in
      try TransferJournal(bytes: bytes)
    }
    let capacity = try storage.slots.reader(boot.running.other).capacity
    let configuration = ReceiverConfiguration(
      slotCapacity: capacity, windowCapacity: windowCapacity, windowGrace: windowGrace)
    engine = ReceiverEngine(
      configuration: configuration, runningSlot: boot.running, runningOnTrial: boot.runningOnTrial,
      journal: journal)
    if journal != nil, engine.transfer == nil {
      // A journal for the slot that now runs (the activation happened) or one that no longer fits.
      try storage.records.remove(TransferJournal.recordName)
    }
  }

  /// Handles one event and every IO it leads to; returns what must go out.
  public mutating func handle(_ event: ReceiverEvent) throws(StorageError) -> [Output] {
    var outputs: [Output] = []
    var next: ReceiverEvent? = event
    while let current = next {
      next = nil
      for action in engine.handle(current) {
        switch action {
        case .notify(let bytes): outputs.append(.notify(bytes))
        case .armTimer(let due): outputs.append(.armTimer(at: due))
        case .restart: outputs.append(.restart)
        case .perform(let io): next = .completed(try perform(io))
        }
      }
    }
    return outputs
  }

  /// The Info characteristic's value now.
  public func info() -> InfoRecord {
    let transfer = engine.transfer
    let inactive = boot.running.other
    let content: SlotContent =
      switch engine.phase {
      case .preparing, .receiving, .validating: .receiving
      case .validated: .validated
      case .activating: .pendingTrial
      case .idle: boot.version(of: inactive) == nil ? .unknown : .good
      }
    return InfoRecord(
      state: engine.transferStatus.state, runningSlot: boot.running,
      flags: boot.runningOnTrial ? [.runningOnTrial] : [],
      slotVersions: SlotID.allCases.map { boot.version(of: $0) ?? .zero },
      inactiveSlotContent: content,
      slotCapacity: UInt32(clamping: engine.configuration.slotCapacity),
      windowCapacity: engine.configuration.windowCapacity, maxChunkPayload: engine.maxChunkPayload,
      transfer: engine.transferStatus, transferVersion: transfer?.version ?? .zero, lastOutcome: .none)
  }

  // MARK: IO

  private mutating func perform(_ io: ReceiverIO) throws(StorageError) -> IOResult {
    do {
      return try performOrThrow(io)
    } catch .powerCut {
      throw .powerCut
    } catch {
      return .failed(String(describing: error))
    }
  }

  private mutating func performOrThrow(_ io: ReceiverIO) throws(StorageError) -> IOResult {
    switch io {
    case .prepare(let journal):
      if boot.version(of: journal.slot) != nil {
        var updated = boot
        updated.invalidate(journal.slot)
        try save(updated)
      }
      try slotWriter(journal.slot).prepare(forImageOf: UInt64(journal.size))
      try storage.records.replace(TransferJournal.recordName, with: journal.encoded)
    case .write(let slot, let offset, let bytes):
      let writer = try slotWriter(slot)
      // withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
      let result = bytes.withUnsafeBytes { buffer in
        Result { () throws(StorageError) in try writer.write(buffer, at: UInt64(offset)) }
      }
      try result.get()
    case .checkWindow(let slot, let offset, let length):
      let bytes = try slotWriter(slot).read(at: UInt64(offset), count: Int(length))
      return .crc32(CRC32.checksum(bytes))
    case .commit(let journal):
      try slotWriter(journal.slot).sync()
      try storage.records.replace(TransferJournal.recordName, with: journal.encoded)
    case .checkImage(let journal):
      return .image(try imageCheck(try storage.slots.reader(journal.slot), journal))
    case .recordValidated(let journal):
      try storage.records.replace(TransferJournal.recordName, with: journal.encoded)
    case .activate(let journal, let permanent):
      var updated = boot
      updated.activate(journal.slot, version: journal.version, permanent: permanent)
      try save(updated)
      try storage.records.remove(TransferJournal.recordName)
    case .confirm:
      var updated = boot
      updated.confirmRunning()
      if updated != boot { try save(updated) }
    case .discard:
      try storage.records.remove(TransferJournal.recordName)
    }
    return .done
  }

  private mutating func save(_ record: BootRecord) throws(StorageError) {
    try storage.records.replace(BootRecord.recordName, with: record.encoded)
    boot = record
  }

  /// The inactive slot's writer, opened once through the one guard that refuses the running slot.
  private mutating func slotWriter(_ slot: SlotID) throws(StorageError) -> any SlotWriter {
    if let writer, writer.slot == slot { return writer.writer }
    let opened = try storage.slots.openForWriting(slot, running: boot.running)
    writer = (slot, opened)
    return opened
  }
}
