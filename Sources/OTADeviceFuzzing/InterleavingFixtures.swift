import OTANordicDFU
import OTATrust
import OTAWire

/// What the interleaving fuzzer's clients send: one image per protocol, each one the device would
/// take, so that a run reaches validations, activations, trials and confirmations, not only
/// refusals. Built once.
enum InterleavingFixtures {
  static let slotCapacity = 16 * 1024
  static let windowCapacity: UInt32 = 1024
  static let factoryVersion = Version(major: 1, minor: 0, revision: 0)
  /// No keys (each protocol's image is well formed, none is signed), and downgrades allowed: the
  /// images may come in any order, so that runs go deep whichever protocol updated last.
  static let policy = ImagePolicy(allowDowngrade: true)

  /// Slot A's bytes on a new device: a raw factory image nobody adopted.
  static let factoryImage: [UInt8] = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

  /// The OTA central's image: raw, 5000 bytes, version 2.0.0.
  static let otaImage: [UInt8] = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
  static let otaVersion = Version(major: 2, minor: 0, revision: 0)

  /// The SMP client's image: MCUboot 3.0.0 around 6000 bytes, unsigned (the device trusts no key).
  static let smpImage: [UInt8] =
    (try? MCUbootImageBuilder(version: Version(major: 3, minor: 0, revision: 0), headerSize: 0x20).build(
      payload: (0..<6000).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) }, signingKey: nil)) ?? []

  /// Legacy DFU's firmware (raw, 4000 bytes) and its init packet (DFU 0.5: any device, version
  /// 2.1.0, the firmware's CRC16).
  static let legacyFirmware: [UInt8] = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 11) }
  static let legacyInitPacket: [UInt8] = {
    var bytes: [UInt8] = []
    bytes.appendU16(0xFFFF)
    bytes.appendU16(0xFFFF)
    bytes.appendU32(0x0201_0000)
    bytes.appendU16(1)
    bytes.appendU16(0xFFFE)
    bytes.appendU16(CRC16.checksum(legacyFirmware))
    return bytes
  }()

  /// Secure DFU's firmware and the init packet Nordic's nrfutil 6.1.7 made for it, signed by the
  /// key below (`--hw-version 52 --sd-req 0x00 --application-version 0x02000000`), as the device
  /// tests keep them (Tests/OTADeviceTests/SecureDFUFixtures.swift).
  static let secureFirmware: [UInt8] = (0..<12_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
  static let secureInitPacket = hex(
    "128b010a4508011241088080801010341a010020002800300038e05d422408031220107d51c63ac1faf1b2437a8736086b94155966de5fb82abb2fe342878f3a9ed7480052040801120010001a404459f612b3499c2a0d55f381c69d9436f4b3449082ce3ad7e5c3ffcac1eeacbf3217a20e5ba3241b2b81cae74d6e1bad3c155a9eba9f4d45d27327d24e2d9e73"
  )
  static let secureTrust = try? SecureDFUDevice.Trust(
    pem: """
      -----BEGIN PUBLIC KEY-----
      MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEo7x0Hmsy6GtoRUMeEzl0w7KVeTotHviJ3YAVhQ5m
      p6M80fSGhn8YKIup7cSaKI0l0tFpDL/wHzXR3MlhTzsD7A==
      -----END PUBLIC KEY-----
      """, hardwareVersion: 52)

  static func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).map { index in
      func value(_ digit: UInt8) -> UInt8 { digit <= 0x39 ? digit - 0x30 : (digit | 0x20) - 0x57 }
      return value(digits[index]) << 4 | value(digits[index + 1])
    }
  }
}
