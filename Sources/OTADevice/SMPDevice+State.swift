import OTABoot
import OTACBOR
import OTAEngine
import OTASMP
import OTAStorage
import OTATrust
import OTAWire

/// Image state read and write, and erase, over the boot state: "test" is OTA's ACTIVATE for a trial,
/// "confirm" of the running image is OTA's CONFIRM, "confirm" of the other image is a permanent
/// ACTIVATE. The running slot is never written; a slot's truth (bad after a rollback) is shown.
extension SMPDevice {
  func images(_ host: ReceiverHost) -> [SMPImageSlot] {
    let boot = host.boot
    let running = host.running
    let other = running.other
    var images = [
      SMPImageSlot(
        slot: 0, version: Self.text(boot[running].version), hash: Self.hash(host, running) ?? [],
        bootable: true, pending: false, confirmed: running == boot.confirmed && !host.runningOnTrial,
        active: true, permanent: false)
    ]
    let validated: Bool
    if case .validated = host.engine.phase { validated = true } else { validated = false }
    let armed = boot.trial.map { $0.slot == other && !$0.begun } ?? false
    let permanent = boot.confirmed == other
    if validated || boot[other].status != .empty, let hash = Self.hash(host, other) {
      let version = validated ? host.engine.transfer?.version ?? boot[other].version : boot[other].version
      images.append(
        SMPImageSlot(
          slot: 1, version: Self.text(version), hash: hash, bootable: boot[other].status != .bad,
          pending: armed || permanent, confirmed: false, active: false, permanent: permanent))
    }
    return images
  }

  /// The image's SHA-256 TLV, as MCUboot reports it; nil for a slot without a well-formed image.
  static func hash(_ host: ReceiverHost, _ slot: SlotID) -> [UInt8]? {
    guard let reader = try? host.storage.slots.reader(slot),
      case .verified(let report) = try? ImageVerifier.survey(
        reader: SlotImageSource(reader), policy: .integrityOnly)
    else { return nil }
    return report.sha256
  }

  static func text(_ version: Version) -> String {
    let base = "\(version.major).\(version.minor).\(version.revision)"
    return version.build == 0 ? base : base + ".\(version.build)"
  }

  mutating func stateWrite(hash: [UInt8]?, confirm: Bool, host: inout ReceiverHost) throws(StorageError)
    -> Result<[CBOR.Entry], SMPFailure>
  {
    let runningHash = Self.hash(host, host.running)
    if hash == nil || hash == runningHash {
      guard confirm else { return .failure(.image(.settingTestToActiveDenied)) }
      if host.runningOnTrial || host.running != host.boot.confirmed {
        guard host.runningOnTrial else { return .failure(.image(.imageConfirmationDenied)) }
        try host.markGood()
        try host.reloadTransfer()
      }
      return .success(SMPServer.imageState(view(host)))
    }
    let other = host.running.other
    guard Self.hash(host, other) == hash else { return .failure(.image(.hashNotFound)) }
    if let trial = host.boot.trial, trial.slot == other, !trial.begun, !confirm {
      return .success(SMPServer.imageState(view(host)))  // already pending
    }
    guard case .validated(let journal) = host.engine.phase else {
      return .failure(.image(host.boot[other].status == .bad ? .imageConfirmationDenied : .noImage))
    }
    switch try host.perform(.activate(journal, permanent: confirm)) {
    case .done:
      try? host.storage.records.remove(SMPUploadRecord.name)
      try host.reloadTransfer()
      return .success(SMPServer.imageState(view(host)))
    case .image(.invalid(let status, _)):
      return .failure(Self.failure(for: status))
    default:
      return .failure(.image(.flashWriteFailed))
    }
  }

  /// Erase of slot 1: the transfer and the slot's image are forgotten (marked empty, never booted);
  /// the bytes stay until the next upload overwrites them. Slot 0, the running one, is refused.
  mutating func erase(slot: UInt64, host: inout ReceiverHost) throws(StorageError) -> Result<
    [CBOR.Entry], SMPFailure
  > {
    guard slot == 1 else { return .failure(.image(.invalidSlot)) }
    let other = host.running.other
    guard other != host.boot.confirmed, host.boot.trial?.slot != other else {
      return .failure(.image(.imageAlreadyPending))
    }
    received = nil
    _ = try host.perform(.discard(answer: Response(requestOpcode: 0, status: .success)))
    try? host.storage.records.remove(SMPUploadRecord.name)
    if host.boot[other].status != .empty {
      try host.changeBoot { $0.invalidate(other) }
    }
    try host.reloadTransfer()
    return .success([])
  }
}
