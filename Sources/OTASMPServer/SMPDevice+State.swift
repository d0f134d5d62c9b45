import OTABoot
import OTACBOR
import OTAEngine
import OTAReceiverHost
import OTASMP
import OTAStorage
import OTATrust
import OTAWire

/// Image state read and write, and erase, over the boot state: "test" is OTA's ACTIVATE for a trial,
/// "confirm" of the running image is OTA's CONFIRM, "confirm" of the other image is a permanent
/// ACTIVATE. The running slot is never written; a slot's truth (bad after a rollback) is shown.
extension SMPDevice {
  /// The slots with Zephyr's flags for a swap device (`img_mgmt_state_read`): the running image is
  /// active, and confirmed unless it runs a trial; the other is pending for a test, pending and
  /// permanent for a permanent switch, and confirmed while the running trial would revert to it.
  func images(_ host: inout ReceiverHost) -> [SMPImageSlot] {
    let boot = host.boot
    let running = host.running
    let other = running.other
    let next = NextBoot(host)
    var images = [
      SMPImageSlot(
        slot: 0, version: Self.text(boot[running].version), hash: host.imageHash(running) ?? [],
        bootable: true, pending: false, confirmed: next != .revert, active: true, permanent: false)
    ]
    // A validated transfer (whichever protocol sent it) is sealed in slot 1, waiting for a test.
    let validated = host.transaction.transfer.flatMap { $0.journal.state == .validated ? $0.journal : nil }
    if validated != nil || boot[other].status != .empty, let hash = host.imageHash(other) {
      let version = validated?.version ?? boot[other].version
      images.append(
        SMPImageSlot(
          slot: 1, version: Self.text(version), hash: hash, bootable: boot[other].status != .bad,
          pending: next == .test || next == .permanent, confirmed: next == .revert, active: false,
          permanent: next == .permanent))
    }
    return images
  }

  /// What the next reset does, as MCUboot's swap type says it (`img_mgmt_get_next_boot_slot`).
  enum NextBoot: Equatable {
    /// The running slot again.
    case same
    /// A trial of the other slot (swap type "test").
    case test
    /// The other slot for good (swap type "perm").
    case permanent
    /// The running trial reverts to the other, confirmed slot unless it is confirmed first.
    case revert

    init(_ host: ReceiverHost) {
      let other = host.running.other
      if host.runningOnTrial {
        self = .revert
      } else if let trial = host.boot.trial, trial.slot == other, !trial.begun {
        self = .test
      } else if host.boot.confirmed == other {
        self = .permanent
      } else {
        self = .same
      }
    }
  }

  static func text(_ version: Version) -> String {
    let base = "\(version.major).\(version.minor).\(version.revision)"
    return version.build == 0 ? base : base + ".\(version.build)"
  }

  /// Zephyr's `img_mgmt_state_write` and `img_mgmt_set_next_boot_slot` for a swap device, answer
  /// for answer: what is already so answers the state; what would change a decision already taken
  /// (a test armed, a permanent switch armed, a trial running) is "already pending" (28).
  mutating func stateWrite(hash: [UInt8]?, confirm: Bool, host: inout ReceiverHost) throws(StorageError)
    -> Result<[CBOR.Entry], SMPFailure>
  {
    guard hash != nil || confirm else { return .failure(.image(.invalidHash)) }  // a test needs a hash
    let next = NextBoot(host)
    let other = host.running.other
    let runningHash = host.imageHash(host.running)
    if hash == nil || hash == runningHash {
      guard confirm else { return .failure(.image(.settingTestToActiveDenied)) }
      switch next {
      case .same:
        guard host.running == host.boot.confirmed else { return .failure(.image(.imageConfirmationDenied)) }
      case .revert:
        // A trial whose slot no longer holds its sealed bytes is marked bad, not confirmed.
        if try host.markGood() != nil { return .failure(.image(.imageConfirmationDenied)) }
      case .test, .permanent:
        return .failure(.image(.imageAlreadyPending))
      }
      return .success(SMPServer.imageState(view(&host)))
    }
    guard host.imageHash(other) == hash else { return .failure(.image(.hashNotFound)) }
    switch (next, confirm) {
    case (.test, false), (.permanent, true), (.revert, true):
      return .success(SMPServer.imageState(view(&host)))  // already so
    case (.test, true), (.permanent, false), (.revert, false):
      return .failure(.image(.imageAlreadyPending))
    case (.same, _):
      break
    }
    // The validated transfer, whoever uploaded it (nobody else holds the device: checked before).
    guard let transfer = host.claimValidated(.smp) else {
      return .failure(.image(host.boot[other].status == .bad ? .imageConfirmationDenied : .noImage))
    }
    switch try host.activate(transfer.id, permanent: confirm) {
    case .success:
      try? host.storage.records.remove(SMPUploadRecord.name)
      return .success(SMPServer.imageState(view(&host)))
    case .failure(.imageInvalid(let status, _)):
      return .failure(Self.failure(for: status))
    case .failure(.deferred):
      // Held on the device (an update lock, consent, a postponement): kept, and carried out by the
      // device itself once nothing holds it. Zephyr's nearest word: MGMT_ERR_EBUSY (docs/SMP.md).
      return .failure(.generic(.busy))
    case .failure(.declined):
      // The device's owner declined the update: the image is dropped. MGMT_ERR_EACCESSDENIED.
      return .failure(.generic(.accessDenied))
    case .failure:
      return .failure(.image(.flashWriteFailed))
    }
  }

  /// Erase of slot 1: the transfer and the slot's image are forgotten (marked empty, never booted);
  /// the bytes stay until the next upload overwrites them. Slot 0, the running one, is refused.
  mutating func erase(slot: UInt64, host: inout ReceiverHost) throws(StorageError) -> Result<
    [CBOR.Entry], SMPFailure
  > {
    // Zephyr's `img_mgmt_erase`: a slot in use (the running one, or one the next reset boots or
    // reverts to) is "no free slot"; a slot this device does not have is "invalid slot".
    guard slot <= 1 else { return .failure(.image(.invalidSlot)) }
    let other = host.running.other
    guard slot == 1, NextBoot(host) == .same, host.boot.trial?.slot != other else {
      return .failure(.image(.noFreeSlot))
    }
    upload = nil
    switch try host.forgetInactiveSlot(by: .smp) {
    case nil: break
    case .busy?: return .failure(.generic(.busy))
    case .some: return .failure(.image(.noFreeSlot))
    }
    try? host.storage.records.remove(SMPUploadRecord.name)
    return .success([])
  }
}
