/// The characteristics of the OTA service, as both links name them; the simulated link uses the raw
/// values as its attribute handles.
public enum Characteristic: UInt8, Sendable, CaseIterable {
  case controlPoint = 1
  case data = 2
  case info = 3
  /// Device Information Service: Firmware Revision String.
  case firmwareRevision = 4
  /// The PSM of the LE L2CAP data channel (d3df0005-…), u16 little-endian (0: none).
  case l2capPSM = 5
  /// The running slot's block hashes (d3df0006-…, `BlockHashes`), for a delta without a base.
  case blockHashes = 6
  /// Device Information Service: Model Number String (0x2A24), the hardware model.
  case modelNumber = 7
  /// Device Information Service: Serial Number String (0x2A25), the device's own identity.
  case serialNumber = 8
  /// Device Information Service: Hardware Revision String (0x2A27).
  case hardwareRevision = 9

  /// The Device Information Service's strings that say which device this is and what hardware it
  /// is (`DeviceIdentity`), in the order a central reads them.
  public static let identity: [Characteristic] = [.serialNumber, .modelNumber, .hardwareRevision]
}
