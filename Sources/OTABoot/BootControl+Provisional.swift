import OTAStorage
import OTATrust
import OTAWire

/// A provisional rebuilt state whose running slot fails to prove itself (its health check fails):
/// with no one at the device, it tries the other slot once, if that one holds an image that
/// verifies; if that one fails too, it goes back to the slot the evidence chose and stays there.
/// The `boot.provisional` marker remembers it: its second byte, the slots that failed (bit 0 A,
/// bit 1 B), its third, the slot the evidence chose (1 A, 2 B, 0 not yet known). Confirming the
/// state removes the marker.
extension BootControl {
  /// `failed`, the running slot of a provisional state, did not prove itself. Remembers it; then
  /// keeps the other slot when it holds a verified image that has not failed yet, or, when both
  /// failed, the slot the evidence chose first (if `failed` is not that one): still provisional,
  /// nothing saved but the marker, the bootloader pointed at it. Returns the slot to restart into,
  /// or nil when the device stays as it is.
  public func abandonProvisional(_ failed: SlotID) throws(BootError) -> SlotID? {
    try locked { () throws(BootError) in
      let state = try reading(persist: false).state
      guard state.provisional else { return nil }
      var marker = ProvisionalMarker(
        try storage { () throws(StorageError) in try store.records.load(BootStateStore.provisionalName) })
      if marker.first == nil { marker.first = failed }
      marker.failed.insert(failed)
      let saved = marker
      try storage { () throws(StorageError) in
        try store.records.replace(BootStateStore.provisionalName, with: saved.bytes)
      }
      let other = failed.other
      let next: SlotID
      if !marker.failed.contains(other) {
        next = other
      } else if let first = marker.first, first != failed {
        next = first
      } else {
        return nil
      }
      guard let slots else { return nil }
      let policy = policy
      let evidence = try storage { () throws(StorageError) in
        try ImageVerifier.surveyTolerant(
          { () throws(StorageError) in try slots.reader(next) }, policy: policy)
      }
      var kept = SlotPair(repeating: BootState.Slot.empty)
      switch evidence {
      case .verified(let report):
        kept[next] = BootState.Slot(
          status: .good, version: report.version, size: UInt32(clamping: report.size), crc32: report.crc32,
          securityCounter: report.securityCounter)
      case .unverifiable where next == marker.first:
        kept[next] = BootState.Slot(status: .good)  // the evidence chose it once: raw, version unknown
      default:
        return nil  // only an image that verifies is worth a try
      }
      var provisional = BootState(
        confirmed: next, slots: kept, outcome: state.outcome,
        securityFloor: max(state.securityFloor, kept[next].securityCounter))
      provisional.provisional = true
      try backendCall { () throws(BootBackendError) in try backend.apply(provisional.plan) }
      return next
    }
  }
}

/// The `boot.provisional` marker's bytes: 1, the failed slots (bit 0 A, bit 1 B), the slot the
/// evidence chose (1 A, 2 B, 0 unknown). The one-byte marker of earlier versions reads as nothing
/// failed yet.
struct ProvisionalMarker: Equatable {
  var failed: Set<SlotID> = []
  var first: SlotID?

  init(_ bytes: [UInt8]?) {
    guard let bytes else { return }
    if bytes.count > 1 {
      failed = Set(SlotID.allCases.filter { bytes[1] & Self.bit($0) != 0 })
    }
    if bytes.count > 2 {
      first = bytes[2] == 1 ? .a : bytes[2] == 2 ? .b : nil
    }
  }

  var bytes: [UInt8] {
    [1, failed.reduce(0) { $0 | Self.bit($1) }, first.map { $0 == .a ? 1 : 2 } ?? 0]
  }

  private static func bit(_ slot: SlotID) -> UInt8 { slot == .a ? 1 : 2 }
}
