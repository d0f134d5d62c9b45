import OTAChecksum
import OTADeltaPlan
import OTAWire

/// The central's side of the protocol as a pure state machine: connect, read Info, resume or PREPARE,
/// stream windows (pipelined, within the credit the link gives), VALIDATE, ACTIVATE, and after the
/// restart VERIFY the running version. Time comes in with every event; nothing here does IO.
public struct SenderEngine: Sendable {
  struct Window: Equatable, Sendable {
    var offset: UInt32
    var end: UInt32
    var crc32: UInt32
    var length: UInt32 { end - offset }
  }

  /// A window whose data is still being streamed from `dataFrom`; its WINDOW command follows the data.
  struct WindowTask: Equatable, Sendable {
    var window: Window
    var dataFrom: UInt32
    /// Its data goes again after a failed WINDOW: as operations, never as frames.
    var resend = false
  }

  /// At most this many WINDOW commands outstanding: the device queues four behind the one it checks.
  static let maxWindowsInFlight = 5

  public let configuration: SenderConfiguration
  public let image: [UInt8]
  /// The CRC32 announced in PREPARE and matched against STATUS: the image's own, unless a test
  /// asks to announce another.
  public let imageCRC: UInt32
  /// Where the push stands, with what only that stage holds.
  var state: State = .idle
  public var phase: SenderPhase { state.phase }
  public internal(set) var report = SenderReport()
  public private(set) var committed: UInt32 = 0

  var now: Duration = .zero
  /// The version of the transfer the device holds, from the last Info read (a resume needs it to
  /// be this push's version, as well as the size and CRC32).
  var transferVersionOnDevice: Version?
  var mtu = ATTMTU.minimum
  var chunkPayload = DataChunk.maxPayload(mtu: .minimum)
  /// Image bytes per chunk on this connection's L2CAP data channel (its send MTU less the offset),
  /// nil while data goes over GATT. A channel's SDUs are not bound by the ATT MTU.
  var channelChunkPayload: Int?
  var windowCapacity: UInt32 = 0
  /// How far past the committed offset the device stores data (Info's receive span; the window
  /// capacity for a device from before it): open windows end within it.
  var receiveSpan: UInt32 = 0
  /// Answers still to come for WINDOW commands abandoned after a failure: they are skipped.
  var ignoredWindowAnswers = 0
  var credits = 0
  /// Missing-range reports are on for this connection (the device announced them, FEATURES agreed).
  var missingReportsOn = false
  /// Failed attempts at the window starting at each offset, and where its last resend started.
  var attempts: [UInt32: (count: Int, resendFrom: UInt32)] = [:]
  var connectFailures = 0
  /// When the device first answered busy in the current run of failed connection attempts.
  var busySince: Duration?
  /// Storage errors and "busy" answered to PREPARE, VALIDATE or ACTIVATE since the last progress.
  var deviceRetries = 0
  var lastFailureReason = ""
  var deadline: Duration?
  var retryAt: Duration?
  var activationSent = false
  /// While the new image runs on trial (or restarts into it): when to stop waiting.
  var trialDeadline: Duration?
  /// The slot the new version must run from when verified: the one that was inactive, or the one
  /// already running it on trial.
  var targetSlot: SlotID?

  /// Earlier releases the device may run: one whose size and CRC32 are the running image's (Info)
  /// is the base of a delta.
  public let bases: [BaseImage]
  /// Data operations are on for this connection (the plan sends fewer bytes, FEATURES agreed).
  var operationsOn = false
  /// Several operations share a write on this connection (features bit 3, FEATURES agreed).
  var packedOn = false
  /// The zstd frames of the active delta, when its base came with them and the device takes them.
  var activeFrames: [DeltaFrame]?
  /// Frames are on for this connection (features bit 4, FEATURES agreed).
  var framesOn = false
  /// The plan for the running image the device announced, kept across reconnects.
  var plan: (identity: BaseImage.Identity, mode: TransferMode, plan: OperationPlan)?
  /// The plan chosen on this connection, when operations send fewer bytes than chunks.
  var activePlan: OperationPlan?
  var maxOperationLength: UInt32 = 0
  /// The last estimate of the plan's bytes on air, with what it was computed for, and the writes
  /// it computed (kept up to `keptWriteBytes`).
  var estimate: (key: EstimateKey, writes: PlannedWrites)?
  /// The writes of the active plan that the estimate kept: sent as they are, not computed again.
  var activeWrites: PlannedWrites?
  /// The most bytes of writes an estimate keeps for the transfer (a 96 MiB delta's are 7 MB).
  static let keptWriteBytes = 256 << 20

  /// Hashes a block as the device does (truncated SHA-256, from OTATrust); nil: no block-hash path.
  let blockDigest: BlockDigester?
  /// What the device announced in the last Info.
  var deviceFeatures: Features = []

  public init(
    image: [UInt8], configuration: SenderConfiguration, bases: [BaseImage] = [],
    blockDigest: BlockDigester? = nil
  ) {
    precondition(image.count <= Int(UInt32.max), "images are limited to 4 GiB by the protocol")
    self.image = image
    self.configuration = configuration
    self.imageCRC = configuration.announcedCRC ?? CRC32.checksum(image)
    self.bases = bases
    self.blockDigest = blockDigest
  }

  public var size: UInt32 { UInt32(image.count) }

  public mutating func handle(_ event: SenderEvent) -> [SenderAction] {
    var out: [SenderAction] = []
    guard phase != .finished else { return out }
    switch event {
    case .start(let now):
      self.now = now
      state = .connecting
      out.append(.connect(after: .zero))
    case .connected(let mtu, let now):
      self.now = now
      connected(mtu: mtu, &out)
    case .connectFailed(let reason, let now):
      self.now = now
      connectionLost(reason: "could not connect: \(reason)", &out)
    case .deviceBusy(let now):
      self.now = now
      if busySince == nil { busySince = now }
      connectionLost(reason: "could not connect: the device is busy with another central", busy: true, &out)
    case .disconnected(let now):
      self.now = now
      connectionLost(reason: "disconnected", &out)
    case .info(let bytes, let now):
      self.now = now
      handleInfo(bytes, &out)
    case .blockHashes(let bytes, let now):
      self.now = now
      handleBlockHashes(bytes, &out)
    case .notification(let bytes, let now):
      self.now = now
      handleNotification(bytes, &out)
    case .dataChannel(let maxChunkPayload, let now):
      self.now = now
      channelChunkPayload = maxChunkPayload.map { max(1, $0) }
      if let payload = channelChunkPayload { chunkPayload = payload }
    case .writable(let count, let now):
      self.now = now
      credits = max(0, count)
      pump(&out)
    case .tick(let now):
      self.now = now
      handleTick(&out)
    }
    if phase != .finished { updateTimer(&out) }
    return out
  }

  // MARK: Connection

  /// The image bytes per chunk this side wants at the current MTU: the configured write size less
  /// the chunk's offset. The device's max chunk payload may lower it further.
  var chosenChunkPayload: Int {
    let value = configuration.writeSize.valueLength(mtu: mtu, dataLength: configuration.linkLayerDataLength)
    return max(1, value - DataChunk.headerSize)
  }

  private mutating func connected(mtu: ATTMTU, _ out: inout [SenderAction]) {
    guard phase == .connecting || phase == .restarting else { return }
    self.mtu = mtu
    channelChunkPayload = nil
    chunkPayload = chosenChunkPayload
    busySince = nil
    missingReportsOn = false
    operationsOn = false
    packedOn = false
    state = phase == .restarting ? .verifying : .readingInfo(hashes: nil)
    resetTransferMachinery()
    deadline = now + configuration.responseTimeout
    out.append(.readInfo)
  }

  private mutating func connectionLost(reason: String, busy: Bool = false, _ out: inout [SenderAction]) {
    if !busy { busySince = nil }
    abandonPaging()
    resetTransferMachinery()
    deadline = nil
    retryAt = nil
    if [.restarting, .verifying, .awaitingConfirmation, .confirming].contains(phase)
      || (phase == .activating && activationSent)
    {
      // The disconnect after ACTIVATE is the restart: reconnect patiently until the restart deadline.
      if case .restarting(let deadline?) = state {
        state = .restarting(deadline: deadline)
      } else {
        state = .restarting(deadline: now + configuration.restartTimeout)
      }
      out.append(.connect(after: backoff(connectFailures)))
      connectFailures += 1
      return
    }
    connectFailures += 1
    lastFailureReason = reason
    report.reconnects += 1
    // A busy device is waited for at least `busyPatience`: the central holding it may be one the
    // device drops soon (silent, or done), and the attempts alone may run out in under a second.
    let waitedForBusy = busySince.map { now - $0 }
    guard
      connectFailures <= configuration.maxConnectAttempts
        || waitedForBusy.map({ $0 < configuration.busyPatience }) == true
    else {
      if let waitedForBusy {
        finish(.deviceBusy(attempts: connectFailures, waited: waitedForBusy), &out)
      } else {
        finish(.unreachable(attempts: connectFailures, lastReason: reason), &out)
      }
      return
    }
    state = .connecting
    out.append(.connect(after: backoff(connectFailures)))
  }

  private func backoff(_ failures: Int) -> Duration {
    guard failures > 0 else { return .zero }
    var delay = configuration.backoff
    for _ in 1..<min(failures, 16) where delay < configuration.maxBackoff { delay = delay * 2 }
    return min(delay, configuration.maxBackoff)
  }

  /// A new connection: no credit, no answers to skip (the transfer's windows go with its phase).
  private mutating func resetTransferMachinery() {
    ignoredWindowAnswers = 0
    credits = 0
  }

  // MARK: Info

  private mutating func handleInfo(_ bytes: [UInt8], _ out: inout [SenderAction]) {
    guard phase == .readingInfo || phase == .verifying || phase == .awaitingConfirmation else { return }
    let info: InfoRecord
    do {
      info = try InfoRecord(bytes: bytes)
    } catch {
      finish(.protocolError("unreadable Info: \(error)"), &out)
      return
    }
    if phase == .verifying || phase == .awaitingConfirmation || activationSent {
      verify(info, &out)
      return
    }
    if report.deviceBefore == nil { report.deviceBefore = info }
    // Only when Info describes a transfer (STATUS is then asked about the same one).
    transferVersionOnDevice = info.transfer.state == .idle ? nil : info.transferVersion
    guard UInt64(image.count) <= UInt64(info.slotCapacity) else {
      finish(.tooLarge(size: image.count, capacity: info.slotCapacity), &out)
      return
    }
    // A window for the device to activate in needs SCHEDULE: say so before a byte is sent.
    if configuration.activate, configuration.schedule != nil, !info.features.contains(.scheduledActivation) {
      finish(.schedulingUnsupported, &out)
      return
    }
    // A device that requires signatures refuses a raw image at VALIDATE: say so before sending it.
    if info.flags.contains(.signaturesRequired), !MCUbootHeader.looksLikeMCUboot(image.prefix(4)) {
      finish(.validationFailed(.signatureInvalid), &out)
      return
    }
    // An encrypted image to a device that holds no decryption key: refused at VALIDATE, so now.
    if !info.flags.contains(.decryptsImages), Self.isEncryptedImage(image) {
      finish(.validationFailed(.cannotDecrypt), &out)
      return
    }
    if info.runningVersion == configuration.version {
      if info.flags.contains(.runningOnTrial) {
        // An earlier push activated this very version and its trial is under way: the device would
        // refuse PREPARE, and the verdict on that trial is what this push is after. Wait for it.
        report.joinedTrial = true
        targetSlot = info.runningSlot
        verify(info, &out)
        return
      }
      if !configuration.force {
        report.alreadyRunning = true
        report.deviceAfter = info
        finish(nil, &out)
        return
      }
    }
    targetSlot = info.runningSlot.other
    windowCapacity = info.windowCapacity
    receiveSpan = max(info.receiveSpan, info.windowCapacity)
    chunkPayload = channelChunkPayload ?? min(chunkPayload, Int(max(1, info.maxChunkPayload)))
    deviceFeatures = info.features
    if needsBlockHashes(info) {
      if info.features.contains(.blockHashRequests), let paging = blockHashPaging(info) {
        state = .readingInfo(hashes: BlockHashRead(info: info, paging: paging))
        sendBlockHashRequests(&out)
        return
      }
      state = .readingInfo(hashes: BlockHashRead(info: info, paging: nil))
      deadline = now + configuration.responseTimeout
      out.append(.readBlockHashes)
      return
    }
    chooseTransferMode(info, hashes: nil)
    continueAfterInfo(&out)
  }

  /// The block hashes Info led to arrived (or none could be had): plan, then go on as after Info.
  private mutating func handleBlockHashes(_ bytes: [UInt8], _ out: inout [SenderAction]) {
    guard case .readingInfo(let read?) = state else { return }
    let info = read.info
    state = .readingInfo(hashes: nil)
    deadline = nil
    let hashes = try? BlockHashes(bytes: bytes)
    report.blockSize = hashes?.blockSize ?? 0
    report.blockHashesRead = hashes?.hashes.count ?? 0
    chooseTransferMode(info, hashes: hashes)
    continueAfterInfo(&out)
  }

  /// After Info (and the block hashes): stop for a dry run, else FEATURES or STATUS.
  mutating func continueAfterInfo(_ out: inout [SenderAction]) {
    if configuration.dryRun {
      report.dryRun = true
      finish(nil, &out)
      return
    }
    state = .checkingStatus
    var wanted: Features = []
    if configuration.missingRangeReports, deviceFeatures.contains(.missingRanges) {
      wanted.insert(.missingRanges)
    }
    if activePlan != nil {
      wanted.insert(.operations)
      if deviceFeatures.contains(.packedOperations) { wanted.insert(.packedOperations) }
      if activeFrames != nil { wanted.insert(.zstdFrames) }
    }
    if !wanted.isEmpty {
      sendControl(.features(wanted), &out)
    } else {
      sendControl(.status, &out)
    }
  }

  private mutating func verify(_ info: InfoRecord, _ out: inout [SenderAction]) {
    report.deviceAfter = info
    let expectedSlot = targetSlot ?? report.deviceBefore?.runningSlot.other
    let stillOurs = info.transfer.size == size && info.transfer.crc32 == imageCRC
    if !report.joinedTrial && info.state == .validated && stillOurs
      && info.runningSlot == report.deviceBefore?.runningSlot
    {
      // The link dropped before the device took ACTIVATE: it never restarted. Ask again.
      state = .activating
      sendControl(activationRequest, &out)
      return
    }
    if info.state == .activating {
      // Restarting right now: look again after it comes back.
      state = .restarting(deadline: nil)
      out.append(.disconnect)
      return
    }
    if info.runningVersion == configuration.version
      && (expectedSlot == nil || info.runningSlot == expectedSlot)
    {
      guard info.flags.contains(.runningOnTrial) else {
        finish(nil, &out)
        return
      }
      if configuration.confirm {
        state = .confirming
        sendControl(.confirm, &out)
        return
      }
      // On trial: the device's health check decides. Look again until it confirms or rolls back.
      if trialDeadline == nil { trialDeadline = now + configuration.trialTimeout }
      deadline = nil
      let wasAwaiting = phase == .awaitingConfirmation
      state = .awaitingConfirmation(pollAt: now + configuration.trialPollInterval)
      if !wasAwaiting {
        out.append(
          .progress(
            SenderProgress(
              phase: .awaitingConfirmation, committed: committed, total: size, bytesOnAir: report.bytesOnAir))
        )
      }
    } else if (info.lastOutcome.result == .rolledBack && info.lastOutcome.to == configuration.version)
      || expectedSlot.map({ info.runningSlot != $0 }) ?? false
    {
      finish(.rolledBack(running: info.runningVersion, reason: info.lastOutcome.reason), &out)
    } else {
      finish(.wrongVersionAfterRestart(expected: configuration.version, running: info.runningVersion), &out)
    }
  }

  // MARK: Control-point answers

  private mutating func handleNotification(_ bytes: [UInt8], _ out: inout [SenderAction]) {
    if bytes.count >= 2, bytes[0] == Opcode.responseMarker, bytes[1] == Opcode.blockHashes.rawValue {
      // A page, or a late one after paging gave up: never a reason to fail the push.
      handleBlockHashAnswer(bytes, &out)
      return
    }
    if bytes.first == MissingReport.marker {
      // A report is advice: one cut short (a bearer with a smaller MTU) is dropped, the device's
      // next report or its WINDOW's answer says the same again.
      if let missing = try? MissingReport(bytes: bytes) { handleMissingReport(missing, &out) }
      return
    }
    let response: Response
    do {
      response = try Response(bytes: bytes)
    } catch {
      finish(.protocolError("unreadable control-point answer \(bytes): \(error)"), &out)
      return
    }
    switch (Opcode(rawValue: response.requestOpcode), phase) {
    case (.window, .transferring), (.window, .validating), (.window, .checkingStatus), (.window, .preparing):
      handleWindowAnswer(response, &out)
    case (.status, .checkingStatus): handleStatusAnswer(response, &out)
    case (.features, .checkingStatus):
      // Whatever the answer, go on: without the feature the transfer takes the base protocol's path.
      if response.status == .success, case .features(let enabled) = response.payload {
        missingReportsOn = enabled.contains(.missingRanges)
        operationsOn = enabled.contains(.operations) && activePlan != nil
        packedOn = operationsOn && enabled.contains(.packedOperations)
        framesOn = operationsOn && enabled.contains(.zstdFrames) && activeFrames != nil
      }
      if !operationsOn { report.transferMode = .plain }
      sendControl(.status, &out)
    case (.prepare, .preparing): handlePrepareAnswer(response, &out)
    case (.validate, .validating): handleValidateAnswer(response, &out)
    case (.activate, .activating): handleActivateAnswer(response, &out)
    case (.schedule, .activating): handleScheduleAnswer(response, &out)
    case (.confirm, .confirming):
      deadline = nil
      guard response.status == .success else {
        finish(.refused(.confirm, response.status), &out)
        return
      }
      // Read Info once more: success only when the device says the new image is confirmed.
      state = .verifying
      deadline = now + configuration.responseTimeout
      out.append(.readInfo)
    default: break  // an answer to something abandoned: nothing waits for it
    }
  }

  private mutating func handleStatusAnswer(_ response: Response, _ out: inout [SenderAction]) {
    deadline = nil
    guard response.status == .success, case .status(let status) = response.payload else {
      finish(.refused(.status, response.status), &out)
      return
    }
    // The same bytes announced as another version are another update: the device would install
    // the version PREPARE claimed, so resume only what was prepared with this one.
    let sameImage =
      status.size == size && status.crc32 == imageCRC
      && (transferVersionOnDevice ?? configuration.version) == configuration.version
    switch status.state {
    case .receiving where sameImage && status.committedOffset <= size:
      if report.transferStartedAt == nil { report.transferStartedAt = now }
      report.resumedFrom.append(status.committedOffset)
      startTransfer(from: status.committedOffset, &out)
    case .validated where sameImage:
      if report.transferStartedAt == nil { report.transferStartedAt = now }
      report.resumedFrom.append(status.committedOffset)
      committed = size
      startValidate(&out)
    case .preparing, .activating:
      retryAt = now + max(configuration.backoff, .milliseconds(100))
    default:
      state = .preparing
      if report.transferStartedAt == nil { report.transferStartedAt = now }
      sendControl(.prepare(size: size, crc32: imageCRC, version: configuration.version), &out)
    }
  }

  private mutating func handlePrepareAnswer(_ response: Response, _ out: inout [SenderAction]) {
    deadline = nil
    switch (response.status, response.payload) {
    case (.success, .prepared(let capacity, let maxChunk)):
      windowCapacity = capacity
      receiveSpan = max(receiveSpan, capacity)
      chunkPayload = channelChunkPayload ?? min(chosenChunkPayload, Int(max(1, maxChunk)))
      startTransfer(from: 0, &out)
    case (.busy, _), (.storageError, _):
      retryLater(.prepare, response.status, &out)
    case (.tooLarge, _):
      finish(.tooLarge(size: image.count, capacity: report.deviceBefore?.slotCapacity ?? 0), &out)
    default:
      finish(.refused(.prepare, response.status), &out)
    }
  }

  private mutating func handleValidateAnswer(_ response: Response, _ out: inout [SenderAction]) {
    deadline = nil
    switch response.status {
    case .success:
      if report.validatedAt == nil { report.validatedAt = now }
      guard configuration.activate else {
        finish(nil, &out)
        return
      }
      state = .activating
      activationSent = true
      sendControl(activationRequest, &out)
    case .missingData:
      // The device's view differs from ours: look again.
      resync(&out)
    case .busy, .storageError:
      retryLater(.validate, response.status, &out)
    default:
      finish(.validationFailed(response.status), &out)
    }
  }

  private mutating func handleActivateAnswer(_ response: Response, _ out: inout [SenderAction]) {
    deadline = nil
    guard response.status == .success else {
      activationSent = false
      if response.status == .deferred, case .deferral(let deferral) = response.payload {
        finish(kept: .deferred(deferral), &out)
      } else if response.status == .declined {
        finish(.declined, &out)
      } else if response.status == .storageError || response.status == .busy {
        retryLater(.activate, response.status, &out)
      } else if Self.imageVerdicts.contains(response.status) {
        // ACTIVATE checks the image again (PROTOCOL.md): its refusal is a validation failure.
        finish(.validationFailed(response.status), &out)
      } else {
        finish(.refused(.activate, response.status), &out)
      }
      return
    }
    // The device now disconnects and restarts: that disconnect is expected.
    state = .restarting(deadline: now + configuration.restartTimeout)
    connectFailures = 0
  }

  /// An MCUboot image whose header says its payload is encrypted.
  static func isEncryptedImage(_ image: [UInt8]) -> Bool {
    guard MCUbootHeader.looksLikeMCUboot(image.prefix(4)), image.count >= MCUbootHeader.byteCount else {
      return false
    }
    var reader = ByteReader(Array(image.prefix(MCUbootHeader.byteCount)))
    return (try? MCUbootHeader(from: &reader))?.isEncrypted ?? false
  }

  /// The statuses with which the device judges an image (at VALIDATE, or again at ACTIVATE).
  public static let imageVerdicts: Set<StatusCode> = [
    .crcMismatch, .validationFailed, .signatureInvalid, .downgradeRefused, .cannotDecrypt,
  ]

  // MARK: Transfer

  private mutating func startTransfer(from offset: UInt32, _ out: inout [SenderAction]) {
    committed = offset
    let largestWindow = Self.windowSize(
      capacity: windowCapacity, windowsInFlight: configuration.windowsInFlight, chunkPayload: chunkPayload)
    var transfer = Transfer(from: offset, windowSize: largestWindow)
    // Frames from the first that starts at or past the resume point; the bytes before it go as
    // operations.
    if framesOn, let activeFrames {
      transfer.nextFrame = activeFrames.firstIndex { $0.start >= offset } ?? activeFrames.count
      let start = transfer.nextFrame < activeFrames.count ? activeFrames[transfer.nextFrame].start : size
      transfer.framed = start..<start
      transfer.framesFrom = start
    }
    state = .transferring(transfer)
    out.append(
      .progress(
        SenderProgress(phase: .transferring, committed: committed, total: size, bytesOnAir: report.bytesOnAir)
      ))
    if committed == size {
      startValidate(&out)
    } else {
      pump(&out)
    }
  }

  /// The largest window of a transfer: the device's window capacity cut into `windowsInFlight`
  /// slices (half of it by default), at most `maxSlice`, so that one is checked while the next
  /// streams, and so that a link that drops every few tens of KiB still commits windows between its
  /// drops. A device with a receive span of several windows takes more of them ahead (up to its
  /// queue of five), not larger ones. (Windows of zstd frames, whose air is a few KiB, are the
  /// whole capacity.)
  public static func windowSize(capacity: UInt32, windowsInFlight: Int, chunkPayload: Int) -> UInt32 {
    let slice = min(maxSlice, max(1, capacity / UInt32(max(1, windowsInFlight))))
    return slice < UInt32(chunkPayload) ? max(1, capacity) : slice
  }

  /// The largest window of chunks: 32 KiB, what a window was at the 64 KiB capacity otad had
  /// before frames.
  public static let maxSlice: UInt32 = 32 * 1024
  /// The largest window of light operations (P-PHASE-15).
  public static let maxLightWindow: UInt32 = 64 * 1024

  private mutating func startValidate(_ out: inout [SenderAction]) {
    state = .validating
    out.append(
      .progress(
        SenderProgress(phase: .validating, committed: committed, total: size, bytesOnAir: report.bytesOnAir)))
    sendControl(.validate, &out)
  }

  /// Streams as much as the credit allows, opening windows up to `windowsInFlight` and sending each
  /// WINDOW command right after the window's last chunk.
  private mutating func pump(_ out: inout [SenderAction]) {
    guard case .transferring(var transfer) = state else { return }
    pump(&transfer, &out)
    state = .transferring(transfer)
  }

  private mutating func pump(_ transfer: inout Transfer, _ out: inout [SenderAction]) {
    while true {
      while transfer.outstanding.count + transfer.tasks.count < Self.maxWindowsInFlight,
        transfer.nextWindowStart < size
      {
        // The plan's own window where one starts here (larger where its writes carry little),
        // unless failed windows made them smaller.
        // Where frames rebuild the bytes, windows of the device's whole capacity: their data is a
        // frame's parts, sent ahead of them.
        let planned =
          operationsOn && transfer.windowSize == transfer.largestWindow
          ? (framesOn && transfer.nextWindowStart >= transfer.framesFrom
            ? UInt32(min(UInt64(transfer.nextWindowStart) + UInt64(windowCapacity), UInt64(size)))
            : activeWrites?.windowEnd(startingAt: transfer.nextWindowStart)) : nil
        let end =
          planned ?? UInt32(min(UInt64(transfer.nextWindowStart) + UInt64(transfer.windowSize), UInt64(size)))
        // Every open window must lie within the device's receive span past the committed offset.
        guard
          UInt64(end) - UInt64(committed) <= UInt64(max(receiveSpan, windowCapacity))
            || transfer.outstanding.isEmpty && transfer.tasks.isEmpty
        else { break }
        let crc = CRC32.checksum(image[Int(transfer.nextWindowStart)..<Int(end)])
        let window = Window(offset: transfer.nextWindowStart, end: end, crc32: crc)
        transfer.tasks.append(WindowTask(window: window, dataFrom: transfer.nextWindowStart))
        transfer.nextWindowStart = end
      }
      if credits > 0, !transfer.resendQueue.isEmpty {
        let range = transfer.resendQueue.removeFirst()
        guard range.lowerBound >= committed else { continue }
        transfer.resentChunks[range.lowerBound] = (transfer.sentFrontier, now)
        let end = sendPiece(from: range.lowerBound, limit: range.upperBound, &transfer, &out)
        if end < range.upperBound { transfer.resendQueue.insert(end..<range.upperBound, at: 0) }
        continue
      }
      if var task = transfer.tasks.first, task.dataFrom < task.window.end {
        if !task.resend, transfer.framed.contains(task.dataFrom) {
          // Sent as a frame already: the device rebuilds these bytes when it decodes it.
          task.dataFrom = min(task.window.end, transfer.framed.upperBound)
          transfer.tasks[0] = task
          continue
        }
        let frameStart = nextFrameStart(transfer)
        if task.resend || task.dataFrom < frameStart {
          guard credits > 0 else { return }
          let limit = task.resend ? task.window.end : min(task.window.end, frameStart)
          task.dataFrom = sendPiece(from: task.dataFrom, limit: limit, &transfer, &out)
          transfer.tasks[0] = task
          continue
        }
      }
      // Frames go ahead of their WINDOWs, as far as the receive span lets them.
      if credits > 0, sendFramePart(&transfer, &out) { continue }
      guard let task = transfer.tasks.first, task.dataFrom >= task.window.end else { return }
      transfer.tasks.removeFirst()
      transfer.outstanding.append((task.window, now))
      out.append(
        .writeControl(
          Request.window(offset: task.window.offset, length: task.window.length, crc32: task.window.crc32)
            .encoded))
    }
  }

  /// Sends the next write from `start` (an operation while they are on, else a chunk), ending at
  /// most at `limit`; returns where it ended.
  private mutating func sendPiece(
    from start: UInt32, limit: UInt32, _ transfer: inout Transfer, _ out: inout [SenderAction]
  ) -> UInt32 {
    let budget = chunkPayload + DataChunk.headerSize
    if operationsOn, let kept = activeWrites, kept.packed == packedOn, kept.budget == budget,
      kept.maxLength == maxOperationLength, let write = kept.write(from: start, limit: limit)
    {
      report.operationsSent += write.operations
      report.plannedWritesSent += 1
      send(write.bytes, covering: start..<write.end, &transfer, &out)
      return write.end
    }
    if operationsOn, packedOn, let activePlan {
      let (bytes, end, count) = activePlan.packedWrite(
        from: start, limit: limit, budget: chunkPayload + DataChunk.headerSize, maxLength: maxOperationLength)
      report.operationsSent += count
      send(bytes, covering: start..<end, &transfer, &out)
      return end
    }
    if operationsOn, let activePlan {
      report.operationsSent += 1
      let (operation, end) = activePlan.write(
        from: start, limit: limit, budget: chunkPayload + DataChunk.headerSize, maxLength: maxOperationLength)
      send(operation.encoded, covering: start..<end, &transfer, &out)
      return end
    }
    let end = min(start + UInt32(chunkPayload), limit)
    let chunk = DataChunk(offset: start, payload: image[Int(start)..<Int(end)])
    send(chunk.encoded, covering: start..<end, &transfer, &out)
    return end
  }

  mutating func send(
    _ write: [UInt8], covering range: Range<UInt32>, _ transfer: inout Transfer, _ out: inout [SenderAction]
  ) {
    out.append(.writeData(write))
    report.bytesOnAir += UInt64(write.count)
    credits -= 1
    report.chunksSent += 1
    report.bytesSent += UInt64(range.count)
    if range.lowerBound < transfer.sentFrontier {
      report.chunksResent += 1
      report.bytesResent += UInt64(range.count)
    }
    transfer.sentFrontier = max(transfer.sentFrontier, range.upperBound)
  }

  /// The device named what it is missing: queue those chunks ahead of new data. A chunk already
  /// resent goes again only when chunks sent after it arrived without it, or after `resendTimeout`.
  private mutating func handleMissingReport(_ missing: MissingReport, _ out: inout [SenderAction]) {
    guard case .transferring(var transfer) = state, missingReportsOn else { return }
    report.missingReports += 1
    let evidence = UInt64(Self.resendEvidenceChunks) * UInt64(chunkPayload)
    for range in missing.ranges {
      var lower = max(range.lowerBound, committed)
      let upper = min(range.upperBound, transfer.sentFrontier)
      while lower < upper {
        // Operations re-plan the range as a whole (pump cuts it into writes); chunks go one by one.
        let end = operationsOn ? upper : min(lower + UInt32(chunkPayload), upper)
        defer { lower = end }
        if transfer.resendQueue.contains(where: { $0.overlaps(lower..<end) }) { continue }
        if let previous = transfer.resentChunks[lower],
          UInt64(missing.highestStored) < UInt64(previous.frontier) + evidence,
          now - previous.at < configuration.resendTimeout
        {
          continue
        }
        transfer.resendQueue.append(lower..<end)
      }
    }
    pump(&transfer, &out)
    state = .transferring(transfer)
  }

  /// Chunks sent after a resend that must have arrived before a new report proves the resend lost.
  static let resendEvidenceChunks = 4

  private mutating func handleWindowAnswer(_ response: Response, _ out: inout [SenderAction]) {
    if ignoredWindowAnswers > 0 {
      ignoredWindowAnswers -= 1
      return
    }
    guard case .transferring(var transfer) = state, !transfer.outstanding.isEmpty,
      case .offset(let offset) = response.payload
    else {
      return
    }
    let head = transfer.outstanding.removeFirst().window
    switch response.status {
    case .success where offset == head.end:
      committed = head.end
      attempts[head.offset] = nil
      connectFailures = 0
      deviceRetries = 0
      report.windowsCommitted += 1
      transfer.goodWindowsInARow += 1
      if !transfer.resentChunks.isEmpty {
        transfer.resentChunks = transfer.resentChunks.filter { $0.key >= committed }
      }
      if transfer.goodWindowsInARow >= 4, transfer.windowSize < transfer.largestWindow {
        transfer.windowSize = min(transfer.largestWindow, transfer.windowSize * 2)
        transfer.goodWindowsInARow = 0
      }
      out.append(
        .progress(
          SenderProgress(
            phase: .transferring, committed: committed, total: size, bytesOnAir: report.bytesOnAir)))
      if committed == size, transfer.outstanding.isEmpty, transfer.tasks.isEmpty {
        startValidate(&out)
      } else {
        pump(&transfer, &out)
        state = .transferring(transfer)
      }
    case .crcMismatch, .storageError, .missingData:
      report.windowFailures += 1
      transfer.goodWindowsInARow = 0
      // A failed window costs a resend from its first gap (or all of it): on a lossy or noisy link
      // smaller windows arrive whole more often and resend less. More of them stay in flight.
      // Not for loss the device reported range by range: loss on BLE is not congestion.
      if !(missingReportsOn && response.status == .missingData) {
        transfer.windowSize = max(
          min(UInt32(chunkPayload) * 4, transfer.largestWindow), transfer.windowSize / 2)
      }
      transfer.resendQueue.removeAll()
      transfer.resentChunks.removeAll()
      if response.status == .crcMismatch, operationsOn, report.transferMode.readsTheRunningSlot,
        (attempts[head.offset]?.count ?? 0) >= 1
      {
        // The same window failed its CRC again: the running image is not what the plan took it
        // for (a block hash that matched wrongly, a base that differs), or a flipped bit twice.
        // No more copies or patches: the rest goes compressed, which needs nothing from the slot.
        fallBackToCompression()
      }
      let resendFrom = min(max(offset, head.offset), head.end)
      var tries = attempts[head.offset] ?? (0, head.offset)
      // Missing data whose first gap moved on is progress, not a failed attempt.
      if !(response.status == .missingData && resendFrom > tries.resendFrom) { tries.count += 1 }
      tries.resendFrom = resendFrom
      attempts[head.offset] = tries
      guard tries.count < configuration.maxWindowAttempts else {
        finish(
          .windowRetriesExhausted(offset: head.offset, status: response.status, attempts: tries.count), &out)
        return
      }
      let later = transfer.outstanding.map(\.window)
      ignoredWindowAnswers += later.count
      transfer.outstanding.removeAll()
      if response.status == .missingData {
        // The device kept what it had: resend from the first gap, then repeat the later commands.
        transfer.tasks =
          [WindowTask(window: head, dataFrom: resendFrom, resend: true)]
          + later.map { WindowTask(window: $0, dataFrom: $0.end) } + transfer.tasks
      } else {
        // The device dropped everything past the committed offset: start again from there, in
        // the smaller windows.
        transfer.tasks.removeAll()
        transfer.nextWindowStart = head.offset
        // The frames' bytes past the committed offset went with the rest: they go as operations.
        transfer.framed = transfer.framed.upperBound..<transfer.framed.upperBound
      }
      pump(&transfer, &out)
      state = .transferring(transfer)
    default:
      // Our idea of the committed offset is wrong, or the device lost the transfer: ask again.
      ignoredWindowAnswers += transfer.outstanding.count
      transfer.outstanding.removeAll()
      resync(&out)
    }
  }

  /// A device that is busy or whose storage failed gets a few more chances, with backoff; each goes
  /// back through STATUS, which picks up wherever the device stands.
  mutating func retryLater(_ opcode: Opcode, _ status: StatusCode, _ out: inout [SenderAction]) {
    deviceRetries += 1
    guard deviceRetries < configuration.maxWindowAttempts else {
      finish(.refused(opcode, status), &out)
      return
    }
    state = .checkingStatus
    retryAt = now + backoff(deviceRetries)
  }

  /// Goes back to phase 1: STATUS decides between resuming and PREPARE.
  private mutating func resync(_ out: inout [SenderAction]) {
    state = .checkingStatus
    sendControl(.status, &out)
  }

  // MARK: Time

  private mutating func handleTick(_ out: inout [SenderAction]) {
    if let retry = retryAt, now >= retry {
      retryAt = nil
      sendControl(.status, &out)
      state = .checkingStatus
    }
    if case .restarting(let limit?) = state, now >= limit {
      finish(.timedOut(.restarting), &out)
      return
    }
    if phase == .restarting || phase == .awaitingConfirmation, let limit = trialDeadline, now >= limit {
      finish(.notConfirmed(configuration.version, waited: configuration.trialTimeout), &out)
      return
    }
    if case .awaitingConfirmation(let due?) = state, now >= due {
      state = .awaitingConfirmation(pollAt: nil)
      deadline = now + configuration.responseTimeout
      out.append(.readInfo)
    }
    if case .readingInfo(let read?) = state, read.paging != nil, let due = currentDeadline, now >= due {
      // No answer to a page: plan without block hashes, as when the read fails.
      pagingFailed(&out)
      return
    }
    if let due = currentDeadline, now >= due {
      if phase == .verifying || phase == .awaitingConfirmation {
        state = .restarting(deadline: nil)
      }
      let timedOutPhase = phase
      deadline = nil
      out.append(.disconnect)
      lastFailureReason = "no answer in phase \(timedOutPhase.rawValue)"
    }
  }

  /// When the thing we wait for is overdue: a quick answer, a slow one, or the oldest WINDOW's.
  private var currentDeadline: Duration? {
    if case .transferring(let transfer) = state {
      return transfer.outstanding.first.map { $0.sentAt + configuration.responseTimeout }
    }
    return deadline
  }

  private mutating func updateTimer(_ out: inout [SenderAction]) {
    let candidates = [
      currentDeadline, retryAt, phaseTimer,
      phase == .restarting || phase == .awaitingConfirmation ? trialDeadline : nil,
    ]
    if let next = candidates.compactMap({ $0 }).min() { out.append(.armTimer(at: next)) }
  }

  /// The time the current phase waits for: the restart's deadline, or the next poll of a trial.
  private var phaseTimer: Duration? {
    switch state {
    case .restarting(let deadline): deadline
    case .awaitingConfirmation(let pollAt): pollAt
    default: nil
    }
  }

  mutating func sendControl(_ request: Request, _ out: inout [SenderAction]) {
    deadline = now + timeout(for: request)
    out.append(.writeControl(request.encoded))
  }

  /// How long `request` may take to be answered: the slow timeout for the requests whose answer
  /// waits on the whole slot (PREPARE may erase it; VALIDATE reads the whole image, and ACTIVATE
  /// checks it again as VALIDATE does), the quick one for the rest.
  func timeout(for request: Request) -> Duration {
    switch request {
    case .prepare, .validate, .activate, .schedule: configuration.slowResponseTimeout
    case .status, .window, .abort, .confirm, .features, .blockHashes: configuration.responseTimeout
    }
  }

  /// The device keeps the activation: the push ends here, and its link is let go (a deferred
  /// ACTIVATE holds the central's session until it disconnects: P-HOLD-6).
  mutating func finish(kept: ActivationKept, _ out: inout [SenderAction]) {
    state = .finished
    deadline = nil
    out.append(.finished(.activationKept(kept, report)))
  }

  mutating func finish(_ failure: PushFailure?, _ out: inout [SenderAction]) {
    state = .finished
    deadline = nil
    if let failure {
      out.append(.finished(.failed(failure, report)))
    } else {
      out.append(.finished(.succeeded(report)))
    }
  }
}
