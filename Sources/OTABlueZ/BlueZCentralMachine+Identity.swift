import OTADBus
import OTALink

/// The Device Information Service's identity strings (serial number, model number, hardware
/// revision): one ReadValue each, of those the device serves, and one `.identity` when all have
/// ended. A characteristic the device lacks, or a read that fails, leaves its field nil.
extension BlueZCentralMachine {
  mutating func readIdentity() {
    guard case .ready(var ready) = phase, ready.identityRead == nil else { return }
    let served = Characteristic.identity.filter { ready.characteristics.identity[$0] != nil }
    guard !served.isEmpty else {
      // An otad from before the identity strings (or another device): nothing to read.
      out.append(.emit(.identity(DeviceIdentity())))
      return
    }
    ready.identityRead = DeviceIdentity()
    ready.identityLeft = Set(served)
    phase = .ready(ready)
    for characteristic in served {
      guard let path = ready.characteristics.identity[characteristic] else { continue }
      start(
        .readIdentity(characteristic),
        BlueZRequest(
          path: path, interface: BlueZ.gattCharacteristic, method: "ReadValue", arguments: [.vardict([:])]))
    }
  }

  /// One read ended, with its text (nil: unknown).
  mutating func identityRead(_ characteristic: Characteristic, _ text: String?) {
    guard case .ready(var ready) = phase, var identity = ready.identityRead,
      ready.identityLeft.remove(characteristic) != nil
    else { return }
    identity[characteristic] = text
    ready.identityRead = ready.identityLeft.isEmpty ? nil : identity
    phase = .ready(ready)
    if ready.identityLeft.isEmpty { out.append(.emit(.identity(identity))) }
  }
}
