import OTAWire

extension SenderEngine {
  /// Decides, from Info, whether this connection sends data operations: only when the device
  /// announces them, the configuration allows them, and the plan sends fewer bytes than chunks.
  /// With a base whose size and CRC32 are the running image's, a delta; else compression alone.
  mutating func chooseTransferMode(_ info: InfoRecord) {
    activePlan = nil
    report.transferMode = .plain
    guard configuration.operations, info.features.contains(.operations), info.maxOperationLength > 0,
      !image.isEmpty
    else { return }
    maxOperationLength = min(info.maxOperationLength, max(1, info.windowCapacity))
    let running = BaseImage.Identity(size: info.runningImageSize, crc32: info.runningImageCRC)
    if plan?.identity != running {
      let match = bases.firstIndex { $0.identity == running && running.size > 0 }
      if let match, let delta = OperationPlan.delta(image, base: bases[match].bytes) {
        plan = (running, .delta(base: match), delta)
      } else if let compressed = OperationPlan.compressed(image) {
        plan = (running, .compressed, compressed)
      } else {
        plan = nil
      }
    }
    guard let chosen = plan else { return }
    let budget = chunkPayload + DataChunk.headerSize
    let window = max(1, info.windowCapacity / UInt32(configuration.windowsInFlight))
    let planned = UInt64(
      chosen.plan.bytesOnAir(window: window, budget: budget, maxLength: maxOperationLength))
    let chunks = (UInt64(image.count) + UInt64(chunkPayload) - 1) / UInt64(chunkPayload)
    let plain = UInt64(image.count) + chunks * UInt64(DataChunk.headerSize)
    // The figures of the first choice: a later one (after a fallback) would hide what was planned.
    if report.plannedBytesOnAir == 0 {
      report.plannedBytesOnAir = planned
      report.plainBytesOnAir = plain
    }
    guard planned < plain else { return }
    activePlan = chosen.plan
    report.transferMode = chosen.mode
  }

  /// After a CRC mismatch on a delta: the running image is not what the plan took it for. The
  /// rest of the push sends compressed literals only, which need nothing from the running slot.
  mutating func fallBackToCompression() {
    guard let compressed = OperationPlan.compressed(image), let identity = plan?.identity else { return }
    plan = (identity, .compressed, compressed)
    activePlan = compressed
    report.transferMode = .compressed
  }
}
