import OTAJournal
import OTAWire

/// How the device side is set up: the inactive slot's size and the protocol's flow-control bounds.
public struct ReceiverConfiguration: Equatable, Sendable {
  /// The capacity of the slot an image is written into; larger images are refused at PREPARE.
  public var slotCapacity: UInt64
  /// The longest WINDOW: the most bytes one CRC check reads and one commit makes durable.
  public var windowCapacity: UInt32
  /// How many bytes past the committed offset chunks and operations are stored (Info's receive
  /// span): the central streams that far ahead of the commits, so that a window's round trip does
  /// not pause a transfer whose writes each rebuild much of the image (copies, zstd frames). At
  /// least the window capacity; 16 of them or 4 MiB by default. Only ranges are kept for it, never
  /// the bytes.
  public var receiveSpan: UInt32
  /// The most separate ranges stored past the committed offset: a chunk or operation that would
  /// open one more is dropped. A central loses a few writes per window, not thousands; a client
  /// that scatters one-byte chunks across the span would otherwise make each insertion cost a move
  /// of the whole list.
  public var maxStoredRanges: Int
  /// How long a WINDOW whose bytes are not all stored waits for late chunks (EATT reorders writes,
  /// so a command may overtake the end of its window) before it fails with "missing data".
  public var windowGrace: Duration
  /// WINDOW commands that may wait behind the one being checked (the central pipelines windows).
  public var maxQueuedWindows: Int
  /// A waiting WINDOW whose gap is still open after this many later chunks were stored has lost a
  /// chunk rather than been overtaken (TCP's fast retransmit reasoning): it fails at once instead
  /// of waiting out `windowGrace`. Reordering on a BLE link moves a chunk a few places at most.
  public var lossEvidenceChunks: Int
  /// With missing-range reports on: a gap is reported only once it has also been open this long.
  /// Through bluetoothd with EATT, writes reach the device in bursts per bearer: a chunk arrives
  /// dozens of places late (measured in the VM: gaps reported at 16 chunks were reordering in about
  /// one chunk in ten) but milliseconds late, where a lost chunk stays missing.
  public var lossEvidenceTime: Duration
  /// The features Info announces and FEATURES may turn on; empty acts as a device from before them
  /// (FEATURES is then an unknown opcode).
  public var features: Features
  /// With missing-range reports on: a gap already reported is reported again once this many more
  /// chunks were stored while it stayed open (its resend was lost too).
  public var reportRepeatChunks: Int
  /// With missing-range reports on: how many times a WINDOW waits out `windowGrace` (reporting its
  /// gaps each time) before it fails with "missing data" as without them.
  public var maxGraceReports: Int
  /// The longest target range one data operation may produce (features bit 1), capped by the
  /// window capacity: the device holds at most one operation's output at a time.
  public var maxOperationLength: UInt32
  /// The most target bytes one zstd frame may produce (features bit 4), at most the receive span:
  /// the device decodes a frame into one buffer of its output, 1 MiB by default.
  public var maxFrameLength: UInt32
  /// The most bytes of zstd parts held at once, over every frame being reassembled: 4 frames of
  /// the largest output by default (a frame against the running image is far smaller than its
  /// output; one of new bytes is a little larger). Parts past it are dropped and counted.
  public var maxHeldFrameBytes: Int
  /// The most frames reassembled at once.
  public static let maxHeldFrames = 8

  public init(
    slotCapacity: UInt64, windowCapacity: UInt32 = 64 * 1024, windowGrace: Duration = .milliseconds(400),
    maxQueuedWindows: Int = 4, lossEvidenceChunks: Int = 16, lossEvidenceTime: Duration = .milliseconds(100),
    features: Features = .all, reportRepeatChunks: Int = 32, maxGraceReports: Int = 4,
    maxOperationLength: UInt32 = 64 * 1024, receiveSpan: UInt32? = nil, maxStoredRanges: Int = 1024,
    maxFrameLength: UInt32 = 1 << 20, maxHeldFrameBytes: Int? = nil
  ) {
    self.maxStoredRanges = max(1, maxStoredRanges)
    self.receiveSpan = max(windowCapacity, receiveSpan ?? Self.defaultReceiveSpan(windowCapacity))
    self.maxOperationLength = min(maxOperationLength, windowCapacity)
    self.maxFrameLength = min(maxFrameLength, self.receiveSpan)
    self.maxHeldFrameBytes = maxHeldFrameBytes ?? 4 * Int(self.maxFrameLength)
    self.lossEvidenceTime = lossEvidenceTime
    self.features = features
    self.reportRepeatChunks = reportRepeatChunks
    self.maxGraceReports = maxGraceReports
    self.slotCapacity = slotCapacity
    self.windowCapacity = windowCapacity
    self.windowGrace = windowGrace
    self.maxQueuedWindows = maxQueuedWindows
    self.lossEvidenceChunks = lossEvidenceChunks
  }

  /// 16 window capacities or 4 MiB, whichever is more, at most 16 MiB: room for a few zstd frames
  /// of 1 MiB ahead of the commits.
  public static func defaultReceiveSpan(_ windowCapacity: UInt32) -> UInt32 {
    UInt32(min(max(UInt64(windowCapacity) * 16, 4 << 20), 16 << 20))
  }
}

/// Input to the receiver: what the central did, the passing of time, and the end of an IO it asked for.
public enum ReceiverEvent: Sendable {
  case connected(mtu: ATTMTU)
  case disconnected
  /// A write to the control point.
  case control([UInt8], now: Duration)
  /// A write to the data characteristic.
  case data([UInt8], now: Duration)
  case tick(now: Duration)
  /// The end of the `ReceiverIO` most recently asked for. The host delivers it before any other event.
  case completed(IOResult)
}

/// How an IO asked for by the receiver ended.
public enum IOResult: Equatable, Sendable {
  case done
  /// The CRC32 of the stored bytes, for `.checkWindow`.
  case crc32(UInt32)
  /// The running slot's bytes, for `.readRunning`.
  case bytes([UInt8])
  /// The running slot's block hashes, for `.hashRunning`: one per block asked for, in order.
  case hashes([UInt64])
  /// The verdict on the whole stored image, for `.checkImage`.
  case image(ImageCheckResult)
  /// Any storage failure; the text is for logs.
  case failed(String)
  /// For `.activate`: something on the device holds the activation (an update lock, consent, a
  /// postponement); the host keeps it and activates on its own later.
  case deferred(ActivationDeferral)
}

public enum ImageCheckResult: Equatable, Sendable {
  case valid
  case invalid(StatusCode, reason: String)
}

/// Work the receiver needs done by its host. One at a time: the next comes after its completion.
public enum ReceiverIO: Equatable, Sendable {
  /// Drop any earlier journal, mark the target slot as holding no image (before its first byte
  /// changes), ready it for `journal.size` bytes, then save the journal.
  case prepare(TransferJournal)
  case write(slot: SlotID, offset: UInt32, bytes: ArraySlice<UInt8>)
  /// Read `[offset, offset + length)` of the running slot (a copy or patch operation's source) and
  /// answer `.bytes`. The only read of the running slot; never of the slot being written.
  case readRunning(offset: UInt32, length: UInt32)
  /// Hash `count` blocks of `blockSize` bytes of the running slot from block `firstBlock` (the last
  /// one short at the running image's end, `imageSize`) and answer `.hashes`: the truncated SHA-256
  /// of each. Never more than 4 MiB read (BlockHashRequest.maxBytesPerAnswer); never the slot being
  /// written; the transfer is untouched.
  case hashRunning(blockSize: UInt32, firstBlock: UInt32, count: Int, imageSize: UInt32)
  /// Decode one reassembled zstd frame against the running image (its first `prefixSize` bytes, as
  /// Info offset 84 gives it) into at most `maxLength` bytes, and answer `.bytes`, or `.failed`
  /// when it does not decode. Reads the running slot only.
  case decodeFrame(frame: [UInt8], prefixSize: UInt32, maxLength: UInt32)
  /// Read back `[offset, offset + length)` as stored and answer its CRC32.
  case checkWindow(slot: SlotID, offset: UInt32, length: UInt32)
  /// Sync the slot's data, THEN save the journal: the committed offset never outruns durable bytes.
  case commit(TransferJournal)
  /// Check the whole stored image: length, CRC32, and an MCUboot image's header and hash.
  case checkImage(TransferJournal)
  /// Save the journal in the validated state.
  case recordValidated(TransferJournal)
  /// Check the image again, then point the boot pointer at the new slot (for a trial unless
  /// permanent) and drop the journal. Completes with `.image(.invalid)` when the check fails.
  case activate(TransferJournal, permanent: Bool)
  /// Mark the running trial slot good.
  case confirm
  /// Drop the journal, then send `answer`.
  case discard(answer: Response)
}

public enum ReceiverAction: Equatable, Sendable {
  /// Send a control-point notification.
  case notify([UInt8])
  case perform(ReceiverIO)
  /// Deliver `.tick` at or after this time.
  case armTimer(at: Duration)
  /// Disconnect and restart into the activated slot (after the ACTIVATE answer has gone out).
  case restart
}

/// Counters for logs, Info and benchmarks.
public struct ReceiverStatistics: Equatable, Sendable {
  public var chunksStored = 0
  public var bytesStored: UInt64 = 0
  public var chunksDuplicate = 0
  public var chunksDropped = 0
  public var writeFailures = 0
  public var windowsCommitted = 0
  public var windowsFailedCRC = 0
  public var windowsFailedMissing = 0
  /// Missing-range reports sent, and the ranges they named.
  public var missingReports = 0
  public var missingRangesReported = 0
  /// Reports found spurious: a chunk they named arrived twice (late and resent).
  public var spuriousReports = 0
  /// Data operations (features bit 1) applied, by kind, and those dropped for breaking a rule
  /// (also counted in `chunksDropped`).
  public var operationsApplied = 0
  public var operationsRejected = 0
  /// zstd frames (features bit 4) decoded and stored; each also counts as an operation applied.
  public var framesDecoded = 0
  /// BLOCK HASHES answered with hashes, and the running-slot bytes those answers hashed.
  public var blockHashAnswers = 0
  public var blockHashBytesRead: UInt64 = 0
  public init() {}

  /// Adds another instance's counters (the same device across restarts).
  public static func += (total: inout ReceiverStatistics, more: ReceiverStatistics) {
    total.chunksStored += more.chunksStored
    total.bytesStored += more.bytesStored
    total.chunksDuplicate += more.chunksDuplicate
    total.chunksDropped += more.chunksDropped
    total.writeFailures += more.writeFailures
    total.windowsCommitted += more.windowsCommitted
    total.windowsFailedCRC += more.windowsFailedCRC
    total.windowsFailedMissing += more.windowsFailedMissing
    total.missingReports += more.missingReports
    total.blockHashAnswers += more.blockHashAnswers
    total.blockHashBytesRead += more.blockHashBytesRead
    total.missingRangesReported += more.missingRangesReported
    total.spuriousReports += more.spuriousReports
    total.operationsApplied += more.operationsApplied
    total.operationsRejected += more.operationsRejected
    total.framesDecoded += more.framesDecoded
  }
}
