import OTADeltaPlan
import OTAWire

/// What a plan's estimate of bytes on air depends on.
struct EstimateKey: Equatable, Sendable {
  var identity: BaseImage.Identity
  var mode: TransferMode
  var budget: Int
  var window: UInt32
  var maxLength: UInt32
  var packed: Bool
  var largestWindow: UInt32
}

extension SenderEngine {
  /// Decides, from Info, whether this connection sends data operations: only when the device
  /// announces them, the configuration allows them, and the plan sends fewer bytes than chunks.
  /// With a base whose size and CRC32 are the running image's, a delta; else compression alone.
  mutating func chooseTransferMode(_ info: InfoRecord, hashes: BlockHashes?) {
    activePlan = nil
    activeWrites = nil
    activeFrames = nil
    report.transferMode = .plain
    guard operationsPossible(info) else { return }
    maxOperationLength = min(info.maxOperationLength, max(1, info.windowCapacity))
    let running = runningIdentity(info)
    if plan?.identity != running {
      let match = matchingBase(running)
      if let match, let delta = deltaPlan(bases[match]) {
        plan = (running, .delta(base: match), delta)
      } else if let hashes, let blockDigest, let copies = blockPlan(hashes, running: running, blockDigest) {
        plan = (running, .blockHashes, copies)
      } else if let compressed = OperationPlan.compressed(image) {
        plan = (running, .compressed, compressed)
      } else {
        plan = nil
      }
    }
    guard let chosen = plan else { return }
    let budget = chunkPayload + DataChunk.headerSize
    let window = Self.windowSize(
      capacity: info.windowCapacity, windowsInFlight: configuration.windowsInFlight,
      chunkPayload: chunkPayload)
    // Planning the whole image costs a deflate per write: once per plan and write size, not per
    // reconnect.
    // A device that packs operations gets them packed (FEATURES asks for bit 3 with bit 1).
    let packed = info.features.contains(.packedOperations)
    // Windows of the whole capacity where their writes carry no more than a window of chunks would:
    // a delta's windows of copies are then half as many WINDOW round trips.
    let largestWindow = max(window, min(info.windowCapacity, Self.maxLightWindow))
    let plain = Self.plainBytesOnAir(size: image.count, chunkPayload: chunkPayload)
    // A delta whose base came with zstd frames this device takes: the frames' parts are what goes,
    // so the operations' writes (resends only) are not computed ahead.
    // Frames that would send more than chunks (a release that shares little with its base) leave
    // the choice to the operations.
    if case .delta(let match) = chosen.mode, let frames = usableFrames(bases[match], info),
      case let framed = Self.framesBytesOnAir(frames, budget: budget, packed: packed), framed < plain
    {
      if report.plannedBytesOnAir == 0 {
        report.plannedBytesOnAir = framed
        report.plainBytesOnAir = plain
      }
      activePlan = chosen.plan
      activeFrames = frames
      report.plannedFrameBytesOnAir = framed
      report.transferMode = chosen.mode
      return
    }
    let key = EstimateKey(
      identity: chosen.identity, mode: chosen.mode, budget: budget, window: window,
      maxLength: maxOperationLength, packed: packed, largestWindow: largestWindow)
    let writes: PlannedWrites
    if let estimate, estimate.key == key {
      writes = estimate.writes
    } else {
      writes = chosen.plan.plannedWrites(
        window: window, largestWindow: largestWindow, airPerWindow: Int(window), budget: budget,
        maxLength: maxOperationLength, packed: packed, keeping: Self.keptWriteBytes)
      estimate = (key, writes)
    }
    let planned = UInt64(writes.bytesOnAir)
    // The figures of the first choice: a later one (after a fallback) would hide what was planned.
    if report.plannedBytesOnAir == 0 {
      report.plannedBytesOnAir = planned
      report.plainBytesOnAir = plain
    }
    guard planned < plain else { return }
    activePlan = chosen.plan
    activeWrites = writes
    report.transferMode = chosen.mode
  }

  /// The image against `base`: its segments planned before when they fit (they cover the image
  /// exactly and read inside the base), else planned now.
  private func deltaPlan(_ base: BaseImage) -> OperationPlan? {
    if let segments = base.segments,
      let planned = OperationPlan(target: image, base: base.bytes, segments: segments)
    {
      return planned
    }
    return OperationPlan.delta(image, base: base.bytes)
  }

  /// Block hashes are worth reading: operations possible, a running image known, no base that
  /// matches it, no plan for it yet, and a way to hash the target's blocks.
  func needsBlockHashes(_ info: InfoRecord) -> Bool {
    let running = runningIdentity(info)
    // A running image of unknown size (a slot written by hand) has block hashes too, over the whole
    // slot, through BLOCK HASHES only (the one-value list is empty then).
    let known = running.size > 0 || info.features.contains(.blockHashRequests)
    return operationsPossible(info) && blockDigest != nil && known && matchingBase(running) == nil
      && plan?.identity != running
  }

  /// The paged read of the running slot's block hashes: over its image, or (its size unknown) over
  /// as much of the slot as the new image's size, a release of the same partition.
  func blockHashPaging(_ info: InfoRecord) -> BlockHashPaging? {
    guard info.runningImageSize == 0 else {
      return BlockHashPaging(imageSize: info.runningImageSize, mtu: mtu)
    }
    return BlockHashPaging(unknownImageOfAbout: UInt32(clamping: image.count), mtu: mtu)
  }

  private func operationsPossible(_ info: InfoRecord) -> Bool {
    configuration.operations && info.features.contains(.operations) && info.maxOperationLength > 0
      && !image.isEmpty
  }

  private func runningIdentity(_ info: InfoRecord) -> BaseImage.Identity {
    BaseImage.Identity(size: info.runningImageSize, crc32: info.runningImageCRC)
  }

  private func matchingBase(_ running: BaseImage.Identity) -> Int? {
    guard running.size > 0 else { return nil }
    return bases.firstIndex { $0.identity == running }
  }

  /// Copies of the blocks the device has; nil when it has none of the target's.
  private func blockPlan(_ hashes: BlockHashes, running: BaseImage.Identity, _ digest: BlockDigester)
    -> OperationPlan?
  {
    // Of a running image of unknown size, the whole blocks read (BlockHashPaging left out a short last one).
    let size =
      running.size > 0
      ? running.size : UInt32(clamping: UInt64(hashes.hashes.count) * UInt64(hashes.blockSize))
    let segments = BlockMatcher.segments(target: image, hashes: hashes, runningSize: size, digest: digest)
    guard segments.contains(where: { if case .copy = $0.source { true } else { false } }) else { return nil }
    return OperationPlan(target: image, base: [], segments: segments, sourceSize: Int(size))
  }

  /// After a CRC mismatch on a delta: the running image is not what the plan took it for. The
  /// rest of the push sends compressed literals only, which need nothing from the running slot.
  /// The bytes on air of the whole image as plain chunks.
  static func plainBytesOnAir(size: Int, chunkPayload: Int) -> UInt64 {
    let chunks = (UInt64(size) + UInt64(chunkPayload) - 1) / UInt64(chunkPayload)
    return UInt64(size) + chunks * UInt64(DataChunk.headerSize)
  }

  mutating func fallBackToCompression() {
    guard let compressed = OperationPlan.compressed(image), let identity = plan?.identity else { return }
    plan = (identity, .compressed, compressed)
    activePlan = compressed
    activeWrites = nil
    activeFrames = nil
    framesOn = false
    report.transferMode = .compressed
  }
}
