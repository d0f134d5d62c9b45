import OTAChecksum
import OTAJournal
import OTAWire

@testable import OTAEngine

/// Drives a `ReceiverEngine` the way a host does, with a slot held in memory, so conversations can be
/// scripted byte by byte. IO completes at once unless a test intercepts it.
struct ReceiverScript {
  var engine: ReceiverEngine
  var slot: [UInt8]
  /// The running slot's bytes, which copy and patch operations read.
  var runningSlot: [UInt8] = []
  var journal: TransferJournal?
  var notifications: [Response] = []
  var timers: [Duration] = []
  var restarts = 0
  var performed: [ReceiverIO] = []
  /// Makes the next IO of this kind fail, once.
  var failNext: ((ReceiverIO) -> Bool)?
  var imageVerdict: ImageCheckResult = .valid
  var now: Duration = .zero

  init(
    capacity: Int = 4096, windowCapacity: UInt32 = 256, running: SlotID = .a, journal: TransferJournal? = nil,
    receiveSpan: UInt32? = nil, maxStoredRanges: Int = 1024
  ) {
    engine = ReceiverEngine(
      configuration: ReceiverConfiguration(
        slotCapacity: UInt64(capacity), windowCapacity: windowCapacity, windowGrace: .milliseconds(100),
        receiveSpan: receiveSpan, maxStoredRanges: maxStoredRanges),
      runningSlot: running, journal: journal)
    slot = [UInt8](repeating: 0, count: capacity)
    self.journal = journal
  }

  mutating func send(_ request: Request) { feed(.control(request.encoded, now: now)) }
  mutating func sendRaw(_ bytes: [UInt8]) { feed(.control(bytes, now: now)) }
  mutating func chunk(_ offset: UInt32, _ bytes: some Collection<UInt8>) {
    feed(.data(DataChunk(offset: offset, payload: ArraySlice(bytes)).encoded, now: now))
  }
  mutating func operation(_ operation: DataOperation) { feed(.data(operation.encoded, now: now)) }
  mutating func advance(_ duration: Duration) {
    now += duration
    feed(.tick(now: now))
  }

  /// The responses so far, cleared.
  mutating func take() -> [Response] {
    defer { notifications.removeAll() }
    return notifications
  }

  mutating func feed(_ event: ReceiverEvent) {
    var next: ReceiverEvent? = event
    while let current = next {
      next = nil
      for action in engine.handle(current) {
        switch action {
        case .notify(let bytes): notifications.append(try! Response(bytes: bytes))
        case .armTimer(let due): timers.append(due)
        case .restart: restarts += 1
        case .perform(let io):
          performed.append(io)
          if let failNext, failNext(io) {
            self.failNext = nil
            next = .completed(.failed("injected"))
          } else {
            next = .completed(complete(io))
          }
        }
      }
    }
  }

  private mutating func complete(_ io: ReceiverIO) -> IOResult {
    switch io {
    case .prepare(let j), .commit(let j), .recordValidated(let j):
      journal = j
    case .write(_, let offset, let bytes):
      slot.replaceSubrange(Int(offset)..<Int(offset) + bytes.count, with: bytes)
    case .checkWindow(_, let offset, let length):
      return .crc32(CRC32.checksum(slot[Int(offset)..<Int(offset + length)]))
    case .checkImage:
      return .image(imageVerdict)
    case .activate, .discard:
      journal = nil
    case .readRunning(let offset, let length):
      return .bytes(Array(runningSlot[Int(offset)..<Int(offset) + Int(length)]))
    case .hashRunning(let blockSize, let first, let count, let imageSize):
      // CRC32 stands in for the host's SHA-256 here: the engine only carries the values.
      return .hashes(
        (0..<count).map { index in
          let start = min((Int(first) + index) * Int(blockSize), Int(imageSize))
          return UInt64(CRC32.checksum(runningSlot[start..<min(start + Int(blockSize), Int(imageSize))]))
        })
    case .decodeFrame(let frame, let prefixSize, let maxLength):
      let prefix = Array(runningSlot.prefix(Int(prefixSize)))
      do {
        return .bytes(
          try prefix.withUnsafeBytes { try ZstdFrame.decode(frame, prefix: $0, maxLength: Int(maxLength)) })
      } catch {
        return .failed("\(error)")
      }
    case .confirm:
      break
    }
    return .done
  }
}
