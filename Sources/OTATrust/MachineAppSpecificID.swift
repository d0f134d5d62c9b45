import Crypto

/// A machine's identity for one application, as systemd's `sd_id128_get_machine_app_specific()`
/// derives it: HMAC-SHA256 keyed with the 16 bytes of /etc/machine-id over the application's
/// 16-byte UUID, its first 16 bytes made a version-4 UUID (the version nibble 4, the variant bits
/// 10), printed as 32 lowercase hex digits. Stable for the machine, unlinkable to its machine-id
/// (which systemd asks applications not to expose), and the same as `systemd-id128 machine-id
/// --app-specific=<application>` prints.
public enum MachineAppSpecificID {
  /// BlueOTA's application UUID (`821676d0-a539-4d9d-b00f-7105f4b10aac`, random once): otad's serial
  /// when none is configured.
  public static let blueOTA: [UInt8] = [
    0x82, 0x16, 0x76, 0xD0, 0xA5, 0x39, 0x4D, 0x9D, 0xB0, 0x0F, 0x71, 0x05, 0xF4, 0xB1, 0x0A, 0xAC,
  ]

  /// The 16 bytes of /etc/machine-id's text (32 hex digits and a newline); nil when it is not
  /// one (empty, "uninitialized", too short).
  public static func machineID(text: String) -> [UInt8]? {
    let digits = Array(text.utf8.prefix { $0 != UInt8(ascii: "\n") })
    guard digits.count == 32 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: 32, by: 2) {
      guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
    }
    return bytes
  }

  /// The application-specific ID of the machine `machineID` (16 bytes) for `application` (16 bytes).
  public static func derive(machineID: [UInt8], application: [UInt8] = blueOTA) -> [UInt8] {
    let mac = HMAC<SHA256>.authenticationCode(for: application, using: SymmetricKey(data: machineID))
    var id = Array(Array(mac).prefix(16))
    id[6] = (id[6] & 0x0F) | 0x40
    id[8] = (id[8] & 0x3F) | 0x80
    return id
  }

  /// `derive` as 32 lowercase hex digits.
  public static func hex(machineID: [UInt8], application: [UInt8] = blueOTA) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in derive(machineID: machineID, application: application) {
      text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
    }
    return String(decoding: text, as: UTF8.self)
  }

  private static func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
