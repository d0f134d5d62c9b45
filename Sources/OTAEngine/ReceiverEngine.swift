import OTAChecksum
import OTAJournal
import OTAWire

/// The device's side of the protocol as a pure state machine: events in, actions out, no IO, no clock.
///
/// Chunks may arrive in any order, twice or never; a WINDOW waits (up to `windowGrace`) for late
/// chunks rather than failing at once, and its CRC is checked over the bytes as stored. WINDOW commands
/// are answered strictly in the order received, which lets the central pipeline them.
public struct ReceiverEngine: Sendable {
  public enum Phase: Equatable, Sendable {
    case idle
    case preparing(TransferJournal)
    case receiving(TransferJournal)
    case validating(TransferJournal)
    case validated(TransferJournal)
    case activating(TransferJournal)
  }

  struct PendingWindow: Equatable, Sendable {
    var offset: UInt32
    var length: UInt32
    var crc32: UInt32
    /// Chunks stored past this window's end while it waited for a gap to fill.
    var laterChunks = 0
    /// Times this window waited out the grace and reported its gaps (missing-range reports on).
    var graceReports = 0
    var end: UInt64 { UInt64(offset) + UInt64(length) }
  }

  public let configuration: ReceiverConfiguration
  public let runningSlot: SlotID
  /// While the running slot is on trial the inactive slot is the only known-good image: no PREPARE.
  public private(set) var runningOnTrial: Bool
  /// CONFIRM would confirm a boot state rebuilt from evidence, and the link does not authenticate
  /// the central (no pairing required): it is refused with `0x03`.
  public private(set) var confirmRefused = false
  /// The lowest version PREPARE accepts (the confirmed one), or nil when downgrades are allowed.
  /// A courtesy that saves a doomed transfer: the host checks the image's own header at VALIDATE.
  public private(set) var minimumVersion: Version?
  var state: State = .idle
  public var phase: Phase { state.phase }
  public private(set) var mtu = ATTMTU.minimum
  public internal(set) var statistics = ReceiverStatistics()
  /// The gaps in `coverage` with their ages, for missing-range reports.
  public private(set) var missing = MissingRanges()
  /// The features the connected central turned on with FEATURES; none until it does.
  public private(set) var enabledFeatures: Features = []
  /// The smallest MTU seen since the central connected: with EATT each bearer has its own MTU and
  /// a report (or a BLOCK HASHES answer) must fit whichever bearer carries it.
  var smallestMTU: ATTMTU?
  var now: Duration = .zero
  /// How long a gap must stay open before a report names it: `lossEvidenceTime` at first, doubled
  /// by each report found spurious (kept while the device runs: the stack's bursts do not change).
  public private(set) var reorderWindow: Duration
  /// The IO asked for and not yet completed.
  public private(set) var inFlight: ReceiverIO?
  /// The rest of a write of packed operations (features bit 3), applied one at a time as the IO
  /// before each ends: at most one write's worth.
  var queuedOperations: [ArraySlice<UInt8>] = []
  /// The size of the running slot's image (the boot state's record): copy and patch operations
  /// read only inside it. 0 when unknown: then they read inside the whole slot (`runningSlotExtent`).
  public private(set) var runningImageSize: UInt32 = 0
  /// The running slot's bytes, at most 4 GiB - 1: what BLOCK HASHES hashes and operations read
  /// when no running image is known (a slot written by hand that nobody adopted).
  public private(set) var runningSlotExtent: UInt32 = 0
  /// Why the last operation was dropped, for the host's log.
  public private(set) var lastRejection: OperationRejection?

  /// Resumes from `journal` when it describes a transfer into the slot that is not running.
  public init(
    configuration: ReceiverConfiguration, runningSlot: SlotID, runningOnTrial: Bool = false,
    journal: TransferJournal?
  ) {
    self.configuration = configuration
    self.runningSlot = runningSlot
    self.runningOnTrial = runningOnTrial
    reorderWindow = configuration.lossEvidenceTime
    if let journal, journal.slot != runningSlot, UInt64(journal.size) <= configuration.slotCapacity {
      state = journal.state == .validated ? .validated(journal) : .receiving(Receiving(journal))
      missing = MissingRanges(from: journal.committedOffset)
    }
  }

  /// The host learnt that the running slot was confirmed or marked bad outside the protocol.
  public mutating func updateRunningOnTrial(_ onTrial: Bool) { runningOnTrial = onTrial }

  /// The host's boot state became (or stopped being) a rebuilt one this link may not confirm.
  public mutating func updateConfirmRefused(_ refused: Bool) { confirmRefused = refused }

  /// The host learnt the running slot's image size from the boot state (0: unknown), and the
  /// slot's own size.
  public mutating func updateRunningImage(size: UInt32, slotExtent: UInt32 = 0) {
    runningImageSize = size
    runningSlotExtent = slotExtent
  }

  /// What copy and patch operations and BLOCK HASHES may read of the running slot: its image when
  /// the boot state knows one, else the whole slot. A copy of bytes that are not what the central
  /// took them for costs a failed WINDOW CRC and a resend, never a wrong image.
  public var readableRunningSize: UInt32 { runningImageSize > 0 ? runningImageSize : runningSlotExtent }

  /// The longest target range one operation may produce; 0 when the device takes no operations.
  public var maxOperationLength: UInt32 {
    configuration.features.contains(.operations) ? configuration.maxOperationLength : 0
  }

  /// The most target bytes one zstd frame may produce; 0 when the device takes no frames.
  public var maxFrameLength: UInt32 {
    configuration.features.isSuperset(of: [.operations, .zstdFrames]) ? configuration.maxFrameLength : 0
  }

  /// The host learnt a new confirmed version (or that downgrades are allowed: nil).
  public mutating func updateMinimumVersion(_ version: Version?) { minimumVersion = version }

  /// The transfer as STATUS and Info report it.
  public var transferStatus: TransferStatus {
    switch phase {
    case .idle: .idle
    case .preparing(let j): Self.status(.preparing, j)
    case .receiving(let j), .validating(let j): Self.status(.receiving, j)
    case .validated(let j): Self.status(.validated, j)
    case .activating(let j): Self.status(.activating, j)
    }
  }

  public var transfer: TransferJournal? {
    switch phase {
    case .idle: nil
    case .preparing(let j), .receiving(let j), .validating(let j), .validated(let j), .activating(let j): j
    }
  }

  public var maxChunkPayload: UInt16 { UInt16(DataChunk.maxPayload(mtu: mtu)) }

  public mutating func handle(_ event: ReceiverEvent) -> [ReceiverAction] {
    var out: [ReceiverAction] = []
    switch event {
    case .connected(let mtu):
      self.mtu = mtu
      smallestMTU = min(smallestMTU ?? mtu, mtu)
    case .disconnected:
      updateReceiving {
        $0.windows.removeAll()
        $0.deadline = nil
        $0.failedWrite = nil
        $0.coverage.removeAll()
        $0.frames = nil
      }
      missing.reset(from: transferStatus.committedOffset)
      enabledFeatures = []
      queuedOperations.removeAll()
      smallestMTU = nil
      mtu = .minimum
    case .control(let bytes, let now):
      self.now = now
      handleControl(bytes, &out)
    case .data(let bytes, let now):
      self.now = now
      handleData(bytes, &out)
    case .tick(let now):
      self.now = now
      handleTick(&out)
    case .completed(let result):
      guard let io = inFlight else { break }
      inFlight = nil
      if case .readRunning = io {
        completeOperation(result, &out)
      } else if case .decodeFrame = io {
        completeFrame(result, &out)
      } else if case .hashRunning = io {
        completeBlockHashes(io, result, &out)
      } else if case .failed = result {
        handleFailure(of: io, &out)
      } else {
        handleCompletion(of: io, result, &out)
      }
      applyQueuedOperations(&out)
    }
    return out
  }

  // MARK: Control point

  private mutating func handleControl(_ bytes: [UInt8], _ out: inout [ReceiverAction]) {
    if bytes.first == Opcode.schedule.rawValue {
      // The host answers SCHEDULE (it keeps activations); one that reaches the engine comes from a
      // device without feature bit 5, which answers as one from before SCHEDULE, whatever the length.
      out.append(.notify(response(Opcode.schedule.rawValue, .unknownOpcode)))
      return
    }
    if bytes.first == Opcode.blockHashes.rawValue, !configuration.features.contains(.blockHashRequests) {
      // As a device from before BLOCK HASHES, whatever the length.
      out.append(.notify(response(Opcode.blockHashes.rawValue, .unknownOpcode)))
      return
    }
    let request: Request
    do {
      request = try Request(bytes: bytes)
    } catch {
      let opcode = bytes.first ?? 0
      out.append(.notify(response(opcode, error.status)))
      return
    }
    if case .features(let wanted) = request {
      // No IO: answered even while an IO runs. A device without features answers as one from
      // before FEATURES did: unknown opcode.
      guard !configuration.features.isEmpty else {
        out.append(.notify(response(request.opcode.rawValue, .unknownOpcode)))
        return
      }
      enabledFeatures = wanted.intersection(configuration.features).intersection(.optIn)
      out.append(.notify(Response(.features, .success, .features(enabledFeatures)).encoded))
      return
    }
    guard inFlight == nil else {
      out.append(.notify(response(request.opcode.rawValue, .busy)))
      return
    }
    switch request {
    case .prepare(let size, let crc32, let version):
      prepare(size: size, crc32: crc32, version: version, &out)
    case .status:
      out.append(.notify(Response(.status, .success, .status(transferStatus)).encoded))
    case .window(let offset, let length, let crc32):
      guard case .receiving = phase else {
        out.append(.notify(response(Opcode.window.rawValue, .invalidState)))
        return
      }
      guard windows.count <= configuration.maxQueuedWindows else {
        out.append(.notify(response(Opcode.window.rawValue, .busy)))
        return
      }
      updateReceiving { $0.windows.append(PendingWindow(offset: offset, length: length, crc32: crc32)) }
      if windows.count == 1 { processHeadWindow(&out) }
    case .validate:
      validate(&out)
    case .activate(let permanent):
      guard case .validated(let journal) = phase else {
        out.append(.notify(response(Opcode.activate.rawValue, .invalidState)))
        return
      }
      state = .activating(journal)
      perform(.activate(journal, permanent: permanent), &out)
    case .abort:
      switch phase {
      case .idle: out.append(.notify(Response(.abort, .success).encoded))
      case .activating: out.append(.notify(response(Opcode.abort.rawValue, .invalidState)))
      default:
        resetWindowState(&out)
        perform(.discard(answer: Response(.abort, .success)), &out)
      }
    case .confirm:
      if confirmRefused {
        out.append(.notify(response(Opcode.confirm.rawValue, .invalidState)))
      } else {
        perform(.confirm, &out)
      }
    case .features:
      break  // answered above
    case .blockHashes(let asked):
      answerBlockHashes(asked, &out)
    case .schedule:
      break  // answered above
    }
  }

  private mutating func prepare(size: UInt32, crc32: UInt32, version: Version, _ out: inout [ReceiverAction])
  {
    if case .activating = phase {
      out.append(.notify(response(Opcode.prepare.rawValue, .invalidState)))
      return
    }
    guard !runningOnTrial else {
      out.append(.notify(response(Opcode.prepare.rawValue, .invalidState)))
      return
    }
    guard size > 0 else {
      out.append(.notify(response(Opcode.prepare.rawValue, .invalidParameter)))
      return
    }
    guard UInt64(size) <= configuration.slotCapacity else {
      out.append(.notify(response(Opcode.prepare.rawValue, .tooLarge)))
      return
    }
    if let minimumVersion, version < minimumVersion {
      out.append(.notify(response(Opcode.prepare.rawValue, .downgradeRefused)))
      return
    }
    let journal = TransferJournal(
      slot: runningSlot.other, state: .receiving, size: size, crc32: crc32, version: version,
      committedOffset: 0)
    resetWindowState(&out)
    state = .preparing(journal)
    perform(.prepare(journal), &out)
  }

  private mutating func validate(_ out: inout [ReceiverAction]) {
    switch phase {
    case .receiving(let journal) where journal.committedOffset == journal.size && windows.isEmpty:
      state = .validating(journal)
      perform(.checkImage(journal), &out)
    case .receiving:
      out.append(.notify(response(Opcode.validate.rawValue, .missingData)))
    case .validated:
      out.append(.notify(Response(.validate, .success).encoded))
    default:
      out.append(.notify(response(Opcode.validate.rawValue, .invalidState)))
    }
  }

  // MARK: Data

  private mutating func handleData(_ bytes: [UInt8], _ out: inout [ReceiverAction]) {
    if inFlight == nil, let journal = receivingJournal, enabledFeatures.contains(.operations) {
      guard enabledFeatures.contains(.packedOperations) else {
        handleOperation(bytes, journal, &out)
        return
      }
      guard let entries = PackedOperations.split(bytes) else {
        reject(.malformed(.invalidField("packed operations: a length of 0 or past the write's end")))
        return
      }
      queuedOperations = entries
      applyQueuedOperations(&out)
      return
    }
    guard inFlight == nil, let journal = receivingJournal, let chunk = try? DataChunk(bytes: bytes)
    else {
      statistics.chunksDropped += 1
      return
    }
    let limit = min(
      UInt64(journal.committedOffset) + UInt64(configuration.receiveSpan), UInt64(journal.size))
    guard chunk.offset >= journal.committedOffset, chunk.end <= limit else {
      if chunk.end <= UInt64(journal.committedOffset), isLateCopyOfAReport(chunk.offset..<UInt32(chunk.end)) {
        return
      }
      statistics.chunksDropped += 1
      return
    }
    if isDuplicate(chunk.offset..<UInt32(chunk.end)) { return }
    guard admitsRange(chunk.offset..<UInt32(chunk.end)) else {
      statistics.chunksDropped += 1
      return
    }
    perform(.write(slot: journal.slot, offset: chunk.offset, bytes: chunk.payload), &out)
  }

  /// Whether `range` may be stored: the stored ranges past the committed offset are below their
  /// limit, or it touches one of them. At the limit a range below the highest one takes its place:
  /// the highest is forgotten (its bytes stay in the slot, and its WINDOW waits for them again, so
  /// they come again), because the data the next commit needs is the lowest. A client scattering
  /// bytes ahead can never keep the next window from filling.
  private mutating func admitsRange(_ range: Range<UInt32>) -> Bool {
    guard coverage.ranges.count >= configuration.maxStoredRanges, coverage.isSeparate(range) else {
      return true
    }
    guard let highest = coverage.ranges.last, range.upperBound < highest.lowerBound else { return false }
    updateReceiving { $0.coverage.removeLast() }
    return true
  }

  /// True (and counted) when every byte of `range` is stored already: nothing is written again.
  private mutating func isDuplicate(_ range: Range<UInt32>) -> Bool {
    guard coverage.contains(range) else { return false }
    statistics.chunksDuplicate += 1
    if missing.isSpuriousReport(range) { widenReorderWindow() }
    return true
  }

  /// A chunk or operation whose bytes are committed already and that a recent report named: its
  /// resend completed the WINDOW before this late copy came (a bearer's burst later than the
  /// reorder window plus a round trip). The same proof as a duplicate inside the WINDOW, counted
  /// as a duplicate.
  private mutating func isLateCopyOfAReport(_ range: Range<UInt32>) -> Bool {
    guard missing.isSpuriousReport(range) else { return false }
    statistics.chunksDuplicate += 1
    widenReorderWindow()
    return true
  }

  /// Reordering deeper in time than the window: widen it (up to the WINDOW's grace, after which
  /// every gap is reported anyway) so that the link's bursts stop costing resends.
  private mutating func widenReorderWindow() {
    statistics.spuriousReports += 1
    reorderWindow = min(reorderWindow * 2, max(configuration.windowGrace, configuration.lossEvidenceTime))
  }

  // MARK: Data operations

  /// The queued operations of a packed write, each as a write of its own, until one waits for IO.
  private mutating func applyQueuedOperations(_ out: inout [ReceiverAction]) {
    while inFlight == nil, !queuedOperations.isEmpty {
      let next = queuedOperations.removeFirst()
      guard let journal = receivingJournal else {
        queuedOperations.removeAll()
        return
      }
      handleOperation(Array(next), journal, &out)
    }
  }

  /// One data write as an operation (features bit 1 on): checked against every rule, then its
  /// output stored exactly as a chunk's would be. Raw and deflate need no IO; copy and patch read
  /// their source from the running slot first.
  private mutating func handleOperation(
    _ bytes: [UInt8], _ journal: TransferJournal, _ out: inout [ReceiverAction]
  ) {
    let operation: DataOperation
    do {
      operation = try DataOperation(bytes: bytes)
    } catch {
      reject(.malformed(error))
      return
    }
    let window =
      UInt64(
        journal.committedOffset)..<min(
        UInt64(journal.committedOffset) + UInt64(configuration.receiveSpan), UInt64(journal.size))
    if case .zstdPart(let position, let last, let part) = operation.body {
      handleFramePart(at: operation.offset, position: position, last: last, part, window: window, &out)
      return
    }
    do throws(OperationRejection) {
      try OperationDecoder.check(
        operation, window: window, maxLength: maxOperationLength, runningImageSize: readableRunningSize)
      if isDuplicate(operation.offset..<UInt32(operation.end)) { return }
      if !admitsRange(operation.offset..<UInt32(operation.end)) {
        throw .tooScattered(operation.targetRange, ranges: coverage.ranges.count)
      }
      if let output = try OperationDecoder.output(of: operation) {
        statistics.operationsApplied += 1
        perform(.write(slot: journal.slot, offset: operation.offset, bytes: output), &out)
      } else if let source = operation.sourceRange {
        try OperationDecoder.checkDifferences(of: operation)
        updateReceiving { $0.pendingOperation = operation }
        perform(.readRunning(offset: UInt32(source.lowerBound), length: operation.length), &out)
      }
    } catch {
      // Below the committed offset is outside the window, but a late copy of a reported range is
      // a duplicate there as it is for a plain chunk: reports work unchanged with operations.
      if case .outsideWindow(let target, _) = error, target.upperBound <= window.lowerBound,
        isLateCopyOfAReport(UInt32(target.lowerBound)..<UInt32(target.upperBound))
      {
        return
      }
      reject(error)
    }
  }

  /// The running slot's bytes for the pending copy or patch arrived (or could not be read).
  private mutating func completeOperation(_ result: IOResult, _ out: inout [ReceiverAction]) {
    guard let operation = receiving?.pendingOperation else { return }
    updateReceiving { $0.pendingOperation = nil }
    guard case .receiving(let journal) = phase else { return }
    switch result {
    case .bytes(let source):
      do throws(OperationRejection) {
        let output = try OperationDecoder.output(of: operation, source: source)
        statistics.operationsApplied += 1
        perform(.write(slot: journal.slot, offset: operation.offset, bytes: output[...]), &out)
      } catch {
        reject(error)
      }
    case .failed(let reason):
      reject(.runningSlotUnreadable(reason))
    default:
      reject(.runningSlotUnreadable("no bytes"))
    }
  }

  /// A part of a zstd frame (features bit 4): held until its frame is whole, then the frame is
  /// decoded against the running image as one operation. The frame's first target byte must lie
  /// in the receive span when each part comes; its whole output when it is decoded.
  private mutating func handleFramePart(
    at target: UInt32, position: UInt32, last: Bool, _ part: ArraySlice<UInt8>, window: Range<UInt64>,
    _ out: inout [ReceiverAction]
  ) {
    guard enabledFeatures.contains(.zstdFrames), maxFrameLength > 0 else {
      reject(.framesOff)
      return
    }
    guard runningImageSize > 0 else {
      reject(.frameWithoutRunningImage)
      return
    }
    guard window.contains(UInt64(target)) else {
      // A late part of a frame committed already: a duplicate, as a late chunk of a report is.
      if UInt64(target) < window.lowerBound, isLateCopyOfAReport(target..<target + 1) { return }
      reject(.outsideWindow(UInt64(target)..<UInt64(target) + 1, window: window))
      return
    }
    // A late part of a frame decoded already (its first byte is stored): nothing to hold.
    if !holdsFrame(at: target), isDuplicate(target..<target + 1) { return }
    let empty = FrameAssembly(
      maxFrameSize: Self.maxFrameSize(maxFrameLength), maxBytes: configuration.maxHeldFrameBytes,
      maxFrames: ReceiverConfiguration.maxHeldFrames)
    var added: Result<[UInt8]?, FrameAssembly.Refusal> = .success(nil)
    updateReceiving { receiving in
      // Taken out of the phase while it changes, so that the parts held are changed in place.
      var frames = receiving.frames ?? empty
      receiving.frames = nil
      added = Result { () throws(FrameAssembly.Refusal) in
        try frames.add(target: target, position: position, last: last, bytes: part)
      }
      receiving.frames = frames
    }
    let whole: [UInt8]?
    switch added {
    case .success(let frame): whole = frame
    case .failure(let refusal):
      reject(.frameRefused(refusal))
      return
    }
    guard let whole else { return }
    // Checked on the frame's header before any decoding: its bytes must fit, and none of them may
    // be stored already, so that the device decodes each target byte at most once per pass (a
    // frame of a few dozen bytes can claim a whole MiB: repeats over stored bytes would make
    // every write cost a MiB of decoding and writing).
    let room = UInt32(clamping: min(UInt64(maxFrameLength), window.upperBound - UInt64(target)))
    guard let claimed = ZstdFrame.contentSize(whole), claimed > 0, claimed <= UInt64(room) else {
      reject(.badFrame("its header states no content size, or more than the \(room) bytes it may rebuild"))
      return
    }
    let range = target..<target + UInt32(claimed)
    if isDuplicate(range) { return }
    if coverage.overlaps(range) {
      reject(.frameOverStoredBytes(UInt64(range.lowerBound)..<UInt64(range.upperBound)))
      return
    }
    updateReceiving { $0.pendingFrame = target }
    perform(.decodeFrame(frame: whole, prefixSize: runningImageSize, maxLength: room), &out)
  }

  /// The most bytes a frame of at most `length` target bytes may take: zstd's bound for bytes that
  /// do not compress (a frame of new bytes), which `ZSTD_compressBound` gives as length + length/256
  /// plus a margin under 128 KiB; rounded up generously.
  static func maxFrameSize(_ length: UInt32) -> UInt32 {
    UInt32(clamping: UInt64(length) + UInt64(length) / 128 + 64 * 1024)
  }

  /// The pending zstd frame's output arrived (or it did not decode): stored as an operation's.
  private mutating func completeFrame(_ result: IOResult, _ out: inout [ReceiverAction]) {
    guard let target = receiving?.pendingFrame, case .receiving(let journal) = phase else { return }
    updateReceiving { $0.pendingFrame = nil }
    guard case .bytes(let output) = result else {
      if case .failed(let reason) = result {
        reject(.badFrame(reason))
      } else {
        reject(.badFrame("no output"))
      }
      return
    }
    let range = UInt64(target)..<UInt64(target) + UInt64(output.count)
    let window =
      UInt64(
        journal.committedOffset)..<min(
        UInt64(journal.committedOffset) + UInt64(configuration.receiveSpan), UInt64(journal.size))
    guard !output.isEmpty, range.lowerBound >= window.lowerBound, range.upperBound <= window.upperBound else {
      reject(.outsideWindow(range, window: window))
      return
    }
    let stored = target..<UInt32(range.upperBound)
    if isDuplicate(stored) { return }
    guard admitsRange(stored) else {
      reject(.tooScattered(range, ranges: coverage.ranges.count))
      return
    }
    statistics.operationsApplied += 1
    statistics.framesDecoded += 1
    perform(.write(slot: journal.slot, offset: target, bytes: output[...]), &out)
  }

  /// Drops an operation that broke a rule: counted with the dropped chunks, its reason kept for
  /// the host's log line. Nothing is stored; the WINDOW that needed it reports the gap.
  private mutating func reject(_ rejection: OperationRejection) {
    statistics.chunksDropped += 1
    statistics.operationsRejected += 1
    lastRejection = rejection
  }

  // MARK: Windows

  /// Moves the first waiting WINDOW on as far as it can go without IO, or starts its CRC check.
  mutating func processHeadWindow(_ out: inout [ReceiverAction]) {
    while inFlight == nil, let head = headWindow, let journal = receivingJournal {
      let committed = journal.committedOffset
      guard head.length > 0, head.length <= configuration.windowCapacity, head.end <= UInt64(journal.size)
      else {
        updateReceiving { _ = $0.windows.removeFirst() }
        out.append(.notify(windowResponse(.invalidParameter, committed)))
        continue
      }
      if head.end <= UInt64(committed) {
        // A repeat of a window already committed (its answer was lost): answer it again.
        updateReceiving { _ = $0.windows.removeFirst() }
        out.append(.notify(windowResponse(.success, committed)))
        continue
      }
      guard head.offset == committed else {
        updateReceiving { _ = $0.windows.removeFirst() }
        out.append(.notify(windowResponse(.invalidParameter, committed)))
        continue
      }
      if let failed = failedWrite, UInt64(failed) < head.end {
        failForStorage(&out)
        return
      }
      let range = head.offset..<UInt32(head.end)
      if coverage.contains(range) {
        updateReceiving { $0.deadline = nil }
        perform(.checkWindow(slot: journal.slot, offset: head.offset, length: head.length), &out)
      } else if !reportsMissing, head.laterChunks >= configuration.lossEvidenceChunks {
        failHeadForMissingData(&out)
      } else if deadline == nil {
        let due = now + configuration.windowGrace
        updateReceiving { $0.deadline = due }
        out.append(.armTimer(at: due))
      }
      return
    }
  }

  private mutating func handleTick(_ out: inout [ReceiverAction]) {
    guard let due = deadline, now >= due, inFlight == nil, let head = windows.first else { return }
    if reportsMissing, head.graceReports < configuration.maxGraceReports {
      // No later chunk proved the gaps (the image's tail, or the resend was lost): name them all.
      updateReceiving { $0.windows[0].graceReports += 1 }
      let window = head.offset..<UInt32(head.end)
      var ranges = missing.takeAll(in: window, limit: reportLimit)
      // The window's end may lie past everything stored: no gap records it, it is missing all the same.
      if missing.highestStored < window.upperBound {
        ranges.append(max(missing.highestStored, window.lowerBound)..<window.upperBound)
      }
      reportMissing(ranges, &out)
      let next = now + configuration.windowGrace
      updateReceiving { $0.deadline = next }
      out.append(.armTimer(at: next))
      return
    }
    failHeadForMissingData(&out)
  }

  // MARK: Missing-range reports

  private var reportsMissing: Bool { enabledFeatures.contains(.missingRanges) }

  private var reportLimit: Int { MissingReport.capacity(mtu: smallestMTU ?? mtu) }

  /// Reports the gaps that later chunks proved lost (and those whose resend was lost too).
  private mutating func reportProvenGaps(_ out: inout [ReceiverAction]) {
    guard reportsMissing else { return }
    let proven = missing.takeProven(
      threshold: configuration.lossEvidenceChunks, minimumAge: reorderWindow, now: now,
      repeatAfter: configuration.reportRepeatChunks, limit: reportLimit)
    reportMissing(proven, &out)
  }

  private mutating func reportMissing(_ ranges: [Range<UInt32>], _ out: inout [ReceiverAction]) {
    guard !ranges.isEmpty else { return }
    let report = MissingReport(
      highestStored: missing.highestStored,
      ranges: MissingReport.reportable(ranges, limit: reportLimit))
    statistics.missingReports += 1
    statistics.missingRangesReported += report.ranges.count
    out.append(.notify(report.encoded))
  }

  /// The first waiting WINDOW still has a gap: all waiting ones fail, resend from the first gap.
  private mutating func failHeadForMissingData(_ out: inout [ReceiverAction]) {
    guard let head = windows.first else { return }
    updateReceiving { $0.deadline = nil }
    let range = head.offset..<UInt32(head.end)
    let resendFrom = coverage.firstGap(in: range) ?? head.offset
    statistics.windowsFailedMissing += 1
    failAllWindows(.missingData, resendFrom: resendFrom, &out)
  }

  /// A write inside the first waiting WINDOW failed: all waiting ones fail with "storage error" and
  /// the central resends from the committed offset, as after a failed commit.
  private mutating func failForStorage(_ out: inout [ReceiverAction]) {
    updateReceiving {
      $0.failedWrite = nil
      $0.coverage.removeAll()
    }
    missing.reset(from: transferStatus.committedOffset)
    failAllWindows(.storageError, resendFrom: transferStatus.committedOffset, &out)
  }

  /// Answers every waiting WINDOW with the same failure: the central resends from `resendFrom`.
  private mutating func failAllWindows(
    _ status: StatusCode, resendFrom: UInt32, _ out: inout [ReceiverAction]
  ) {
    for _ in windows { out.append(.notify(windowResponse(status, resendFrom))) }
    updateReceiving {
      $0.windows.removeAll()
      $0.deadline = nil
    }
  }

  private mutating func resetWindowState(_ out: inout [ReceiverAction]) {
    // WINDOWs still waiting belong to the transfer being dropped: answer them, never leave them hanging.
    failAllWindows(.invalidState, resendFrom: transferStatus.committedOffset, &out)
    updateReceiving {
      $0.coverage.removeAll()
      $0.failedWrite = nil
    }
  }

  // MARK: IO completions

  mutating func perform(_ io: ReceiverIO, _ out: inout [ReceiverAction]) {
    inFlight = io
    out.append(.perform(io))
  }

  private mutating func handleCompletion(of io: ReceiverIO, _ result: IOResult, _ out: inout [ReceiverAction])
  {
    switch io {
    case .prepare(let journal):
      state = .receiving(Receiving(journal))
      missing.reset(from: 0)
      out.append(
        .notify(
          Response(
            .prepare, .success,
            .prepared(windowCapacity: configuration.windowCapacity, maxChunkPayload: maxChunkPayload)
          ).encoded))
    case .write(_, let offset, let bytes):
      statistics.chunksStored += 1
      statistics.bytesStored += UInt64(bytes.count)
      updateReceiving {
        $0.coverage.insert(offset..<offset + UInt32(bytes.count))
        if let head = $0.windows.first, UInt64(offset) >= head.end { $0.windows[0].laterChunks += 1 }
      }
      missing.stored(offset..<offset + UInt32(bytes.count), at: now)
      reportProvenGaps(&out)
      processHeadWindow(&out)
    case .checkWindow:
      guard case .crc32(let crc) = result, let head = headWindow, var journal = receivingJournal else {
        return
      }
      if crc == head.crc32 {
        journal.committedOffset = UInt32(head.end)
        perform(.commit(journal), &out)
      } else {
        statistics.windowsFailedCRC += 1
        updateReceiving { $0.coverage.removeAll() }
        missing.reset(from: journal.committedOffset)
        failAllWindows(.crcMismatch, resendFrom: journal.committedOffset, &out)
      }
    case .commit(let journal):
      // The WINDOWs behind the committed one wait on, with a write failed past it.
      updateReceiving {
        $0.journal = journal
        $0.coverage.removeAll(below: journal.committedOffset)
        $0.frames?.drop(below: journal.committedOffset)
      }
      statistics.windowsCommitted += 1
      missing.removeAll(below: journal.committedOffset)
      // A disconnect while the commit ran dropped the waiting WINDOWs: nobody is left to answer.
      guard !windows.isEmpty else { return }
      updateReceiving { _ = $0.windows.removeFirst() }
      out.append(.notify(windowResponse(.success, journal.committedOffset)))
      processHeadWindow(&out)
    case .checkImage(var journal):
      switch result {
      case .image(.valid):
        journal.state = .validated
        perform(.recordValidated(journal), &out)
      case .image(.invalid(let status, _)):
        perform(.discard(answer: Response(.validate, status)), &out)
      default:
        state = .receiving(Receiving(journal))
      }
    case .recordValidated(let journal):
      state = .validated(journal)
      out.append(.notify(Response(.validate, .success).encoded))
    case .activate(let journal, _):
      if case .deferred(let deferral) = result {
        // Kept by the host: the image stays validated, the answer says why and when to ask again.
        state = .validated(journal)
        out.append(.notify(Response(.activate, .deferred, .deferral(deferral)).encoded))
        return
      }
      if case .image(.invalid(let status, _)) = result {
        // The host checks the image once more before it touches the boot pointer; a slot that no
        // longer passes (its bytes changed, the trusted keys changed) is dropped, never activated.
        perform(.discard(answer: Response(.activate, status)), &out)
        return
      }
      out.append(.notify(Response(.activate, .success).encoded))
      out.append(.restart)
    case .readRunning, .hashRunning, .decodeFrame:
      break  // completed in completeOperation, completeBlockHashes, completeFrame
    case .confirm:
      if case .image(.invalid(let status, _)) = result {
        // The trial's slot no longer holds what was checked: rolled back, not confirmed.
        out.append(.notify(response(Opcode.confirm.rawValue, status)))
        return
      }
      runningOnTrial = false
      out.append(.notify(Response(.confirm, .success).encoded))
    case .discard(let answer):
      state = .idle
      out.append(.notify(answer.encoded))
    }
  }

  /// A storage failure answers the request behind it with "storage error" and leaves a state from
  /// which the central can go on: the committed offset never moves without a successful commit.
  private mutating func handleFailure(of io: ReceiverIO, _ out: inout [ReceiverAction]) {
    switch io {
    case .prepare:
      state = .idle
      out.append(.notify(response(Opcode.prepare.rawValue, .storageError)))
    case .write(_, let offset, let bytes):
      statistics.writeFailures += 1
      // The bytes arrived: no gap to report (the WINDOW holding them fails with storage error).
      missing.stored(offset..<offset + UInt32(bytes.count), at: now)
      updateReceiving { $0.failedWrite = min($0.failedWrite ?? offset, offset) }
      processHeadWindow(&out)
    case .checkWindow, .commit:
      failForStorage(&out)
    case .checkImage(let journal), .recordValidated(let journal):
      state = .receiving(Receiving(journal))
      out.append(.notify(response(Opcode.validate.rawValue, .storageError)))
    case .activate(let journal, _):
      state = .validated(journal)
      out.append(.notify(response(Opcode.activate.rawValue, .storageError)))
    case .readRunning, .hashRunning, .decodeFrame:
      break  // completed in completeOperation, completeBlockHashes, completeFrame
    case .confirm:
      out.append(.notify(response(Opcode.confirm.rawValue, .storageError)))
    case .discard(let answer):
      // The journal may survive; the transfer is dropped from memory all the same.
      state = .idle
      let status: StatusCode = answer.status == .success ? .storageError : answer.status
      out.append(.notify(Response(requestOpcode: answer.requestOpcode, status: status).encoded))
    }
  }

  // MARK: Responses

  /// A failure (or payload-less) response; WINDOW answers always carry an offset.
  func response(_ opcode: UInt8, _ status: StatusCode) -> [UInt8] {
    if opcode == Opcode.window.rawValue { return windowResponse(status, transferStatus.committedOffset) }
    return Response(requestOpcode: opcode, status: status).encoded
  }

  private func windowResponse(_ status: StatusCode, _ offset: UInt32) -> [UInt8] {
    Response(.window, status, .offset(offset)).encoded
  }

  private static func status(_ state: DeviceState, _ journal: TransferJournal) -> TransferStatus {
    TransferStatus(
      state: state, size: journal.size, crc32: journal.crc32, committedOffset: journal.committedOffset)
  }
}
