// Bluetooth device addresses as people write them ("AA:BB:CC:DD:EE:FF", most significant byte
// first) and as the kernel takes them (bdaddr_t, least significant byte first).
import CBluetooth

/// A Bluetooth device address, most significant byte first.
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
  public let bytes: [UInt8]

  /// BDADDR_ANY: bind to whichever adapter the kernel routes through.
  public static let any = BluetoothAddress(validBytes: [0, 0, 0, 0, 0, 0])

  private init(validBytes: [UInt8]) { bytes = validBytes }

  /// Six bytes, most significant first; nil for any other count.
  public init?(bytes: [UInt8]) {
    guard bytes.count == 6 else { return nil }
    self.bytes = bytes
  }

  /// "AA:BB:CC:DD:EE:FF" (either case); nil for anything else.
  public init?(parsing text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 6 else { return nil }
    var bytes: [UInt8] = []
    for part in parts {
      guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
      bytes.append(byte)
    }
    self.bytes = bytes
  }

  public var description: String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: ":")
  }

  var kernelValue: bdaddr_t {
    var value = bdaddr_t()
    withUnsafeMutableBytes(of: &value.b) { raw in
      for index in 0..<6 { raw[index] = bytes[5 - index] }
    }
    return value
  }

  init(kernelValue: bdaddr_t) {
    var value = kernelValue
    bytes = withUnsafeBytes(of: &value.b) { raw in (0..<6).map { raw[5 - $0] } }
  }
}

/// The two kinds of LE address (BDADDR_LE_PUBLIC, BDADDR_LE_RANDOM).
public enum BluetoothAddressType: UInt8, Sendable, Hashable, CustomStringConvertible {
  case lePublic = 1
  case leRandom = 2

  /// BlueZ's Device1 `AddressType` ("public" or "random").
  public init?(bluezName: String) {
    switch bluezName {
    case "public": self = .lePublic
    case "random": self = .leRandom
    default: return nil
    }
  }

  public var description: String { self == .lePublic ? "public" : "random" }
}

/// The security a Bluetooth socket asks of its link (BT_SECURITY): medium and above encrypt it,
/// high needs an authenticated (MITM-protected) key.
public enum BluetoothSecurity: UInt8, Sendable, Hashable, Comparable, CustomStringConvertible {
  case low = 1
  case medium = 2
  case high = 3
  case fips = 4

  public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String {
    switch self {
    case .low: "low"
    case .medium: "medium"
    case .high: "high"
    case .fips: "fips"
    }
  }
}
