import OTAStorage
import OTATrust
import OTAWire

/// Whether a slot still holds the bytes its activation checked (`BootState.Slot.seal`).
public enum SealCheck: Equatable, Sendable, CustomStringConvertible {
  /// The SHA-256 of the slot's first `size` bytes is the seal.
  case intact
  /// They differ, or the slot cannot be read: the slot must not boot, nor be confirmed.
  case broken(String)
  /// No seal was recorded (a factory image, or one activated before seals): nothing to check.
  case unsealed

  public var description: String {
    switch self {
    case .intact: "intact"
    case .broken(let why): "broken: \(why)"
    case .unsealed: "unsealed"
    }
  }
}

/// The boot stage never runs unsealed bytes: before a trial boots, and before it is confirmed (by
/// its health check, a central's CONFIRM, SMP's confirm or `otad mark-good`), its slot is read
/// again and its SHA-256 compared with the seal its activation recorded. A mismatch rolls the
/// trial back with the reason `sealBroken`.
extension BootControl {
  /// `slot` against the seal `state` recorded for it.
  public func checkSeal(_ slot: SlotID, in state: BootState) -> SealCheck {
    guard let seal = state[slot].seal else { return .unsealed }
    guard let slots else { return .broken("slot \(slot) cannot be read here") }
    let size = state[slot].size
    do {
      let reader = try slots.reader(slot)
      guard UInt64(size) <= reader.capacity else {
        return .broken("slot \(slot) is smaller than the \(size) bytes sealed")
      }
      let digest = try SourceDigest.sha256(of: SlotImageSource(reader), length: UInt64(size))
      guard digest == seal else {
        return .broken(
          "slot \(slot)'s \(size) bytes are no longer those checked at activation (SHA-256 \(Self.hex(digest.prefix(8)))…, sealed \(Self.hex(seal.prefix(8)))…)"
        )
      }
      return .intact
    } catch {
      return .broken("slot \(slot) cannot be read: \(error)")
    }
  }

  /// The trial about to boot (or to be confirmed), checked against its seal: a broken one is
  /// marked bad in `state` (the caller saves it). Returns why, or nil when it holds.
  func rollBackBrokenSeal(_ state: inout BootState) -> String? {
    guard let trial = state.trial, case .broken(let why) = checkSeal(trial.slot, in: state) else {
      return nil
    }
    state.markBad(.sealBroken)
    return why
  }

  static func hex(_ bytes: ArraySlice<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
  }
}
