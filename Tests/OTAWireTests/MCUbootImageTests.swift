import Foundation
import OTATestSupport
import OTAWire
import Testing

/// MCUboot's image format: hand-built byte vectors, the real imgtool images in `Images/`, and
/// corruptions of them, which must all be refused with `WireError` (never a trap).
@Suite("MCUboot image format")
struct MCUbootImageTests {
  // MARK: - Hand-built vectors

  /// A header with every field distinct, byte by byte.
  static let headerVector: [UInt8] = [
    0x3d, 0xb8, 0xf3, 0x96,  // magic 0x96f3b83d, little-endian
    0x00, 0x10, 0x00, 0x08,  // load_addr 0x08001000
    0x00, 0x02,  // hdr_size 0x0200 = 512
    0x10, 0x00,  // protect_tlv_size 0x0010 = 16
    0x03, 0x01, 0x00, 0x00,  // img_size 0x00000103 = 259
    0x20, 0x00, 0x00, 0x00,  // flags 0x00000020 = IMAGE_F_RAM_LOAD
    0x01,  // version major 1
    0x02,  // version minor 2
    0x03, 0x00,  // version revision 3
    0x04, 0x00, 0x00, 0x00,  // version build 4
    0x00, 0x00, 0x00, 0x00,  // pad
  ]

  @Test func decodesAHandBuiltHeader() throws {
    var reader = ByteReader(Self.headerVector)
    let header = try MCUbootHeader(from: &reader)
    #expect(reader.isAtEnd)
    #expect(header.loadAddress == 0x0800_1000)
    #expect(header.headerSize == 512)
    #expect(header.protectedTLVSize == 16)
    #expect(header.imageSize == 259)
    #expect(header.flags == .ramLoad)
    #expect(header.version == Version(major: 1, minor: 2, revision: 3, build: 4))
    #expect(header.reserved == 0)
    #expect(header.tlvOffset == 512 + 259)
    #expect(header.hashedLength == 512 + 259 + 16)

    var encoded: [UInt8] = []
    header.append(to: &encoded)
    #expect(encoded == Self.headerVector)
  }

  /// The smallest complete image: a 32-byte header, a 3-byte payload, a protected area with one
  /// security counter, an unprotected area with one (fake) SHA256 and one vendor TLV.
  static let imageVector: [UInt8] = [
    0x3d, 0xb8, 0xf3, 0x96,  // magic
    0x00, 0x00, 0x00, 0x00,  // load_addr 0
    0x20, 0x00,  // hdr_size 32: the payload follows the fixed header directly
    0x0c, 0x00,  // protect_tlv_size 12 = info 4 + TLV header 4 + value 4
    0x03, 0x00, 0x00, 0x00,  // img_size 3
    0x00, 0x00, 0x00, 0x00,  // flags none
    0x00, 0x09, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,  // version 0.9.1+0
    0x00, 0x00, 0x00, 0x00,  // pad
    0xaa, 0xbb, 0xcc,  // payload, offsets 32..<35
    0x08, 0x69, 0x0c, 0x00,  // protected info: magic 0x6908, total 12
    0x50, 0x00, 0x04, 0x00,  // TLV SEC_CNT (0x50), length 4
    0x07, 0x00, 0x00, 0x00,  // security counter 7
    0x07, 0x69, 0x17, 0x00,  // unprotected info: magic 0x6907, total 23 = 4 + 6 + 4 + 9
    0x10, 0x00, 0x02, 0x00,  // TLV SHA256 (0x10), length 2 (wrong for a real hash; the parser
    0x11, 0x22,  //   does not judge values, the verifier does)
    0xa5, 0x00, 0x00, 0x00,  // TLV 0x00a5 (vendor range), length 0
    0x42, 0x01, 0x05, 0x00,  // TLV 0x0142 (unknown), length 5
    0x01, 0x02, 0x03, 0x04, 0x05,
  ]

  @Test func decodesAHandBuiltImage() throws {
    let layout = try MCUbootImageLayout(parsing: Self.imageVector)
    #expect(layout.header.version == Version(major: 0, minor: 9, revision: 1))
    #expect(layout.payloadRange == 32..<35)
    #expect(layout.protectedTLVRange == 35..<47)
    #expect(layout.hashedRange == 0..<47)
    #expect(layout.unprotectedTLVRange == 47..<70)
    #expect(layout.totalLength == UInt64(Self.imageVector.count))
    #expect(layout.protectedTLVs == [MCUbootTLV(type: .securityCounter, value: [7, 0, 0, 0])])
    #expect(
      layout.unprotectedTLVs == [
        MCUbootTLV(type: .sha256, value: [0x11, 0x22]),
        MCUbootTLV(type: MCUbootTLVType(rawValue: 0xa5), value: []),
        MCUbootTLV(type: MCUbootTLVType(rawValue: 0x142), value: [1, 2, 3, 4, 5]),
      ])
    #expect(layout.signatureTLVs.isEmpty)

    var encoded = Array(Self.imageVector[0..<35])
    layout.appendTLVAreas(to: &encoded)
    #expect(encoded == Self.imageVector)
  }

  @Test func namesTLVTypesAsMCUbootDoes() {
    #expect(MCUbootTLVType.keyHash.rawValue == 0x01)
    #expect(MCUbootTLVType.publicKey.rawValue == 0x02)
    #expect(MCUbootTLVType.sha256.rawValue == 0x10)
    #expect(MCUbootTLVType.rsa2048PSS.rawValue == 0x20)
    #expect(MCUbootTLVType.ecdsa224.rawValue == 0x21)
    #expect(MCUbootTLVType.ecdsaSignature.rawValue == 0x22)
    #expect(MCUbootTLVType.rsa3072PSS.rawValue == 0x23)
    #expect(MCUbootTLVType.ed25519.rawValue == 0x24)
    #expect(MCUbootTLVType.encryptedRSA2048.rawValue == 0x30)
    #expect(MCUbootTLVType.encryptedKW.rawValue == 0x31)
    #expect(MCUbootTLVType.encryptedEC256.rawValue == 0x32)
    #expect(MCUbootTLVType.dependency.rawValue == 0x40)
    #expect(MCUbootTLVType.securityCounter.rawValue == 0x50)
    #expect(MCUbootTLVType.bootRecord.rawValue == 0x60)
    #expect(MCUbootTLVType.ecdsaSignature.description == "ECDSA_SIG (0x22)")
    #expect(MCUbootTLVType(rawValue: 0xa5).description == "0xa5")
    #expect(MCUbootTLVType(rawValue: 0x1a0).description == "0x01a0")
    #expect(MCUbootTLVType(rawValue: 0xa5).name == nil)
  }

  @Test func looksLikeMCUbootChecksOnlyTheMagic() throws {
    #expect(MCUbootHeader.looksLikeMCUboot(Self.headerVector))
    #expect(MCUbootHeader.looksLikeMCUboot(Self.headerVector[0..<4]))
    #expect(MCUbootHeader.looksLikeMCUboot(Self.headerVector.dropFirst(0)))
    for length in 0..<4 { #expect(!MCUbootHeader.looksLikeMCUboot(Self.headerVector.prefix(length))) }
    #expect(!MCUbootHeader.looksLikeMCUboot([0x3c, 0xb8, 0xf3, 0x96]))  // IMAGE_MAGIC_V1
    #expect(!MCUbootHeader.looksLikeMCUboot(try MCUbootSampleImages.bytes("raw-4099B.bin")))
  }

  // MARK: - Real imgtool images

  @Test func parsesTheUnsignedImgtoolImage() throws {
    let image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let layout = try MCUbootImageLayout(parsing: image)
    #expect(layout.header.version == Version(major: 1, minor: 2, revision: 3, build: 4))
    #expect(layout.header.headerSize == 0x200)
    #expect(layout.header.imageSize == 4099)
    #expect(layout.header.protectedTLVSize == 0)
    #expect(layout.header.flags == [])
    #expect(layout.protectedArea == nil)
    #expect(layout.unprotectedTLVs.map(\.type) == [.sha256])
    #expect(layout.unprotectedTLVs.first?.value.count == 32)
    #expect(layout.signatureTLVs.isEmpty)
    #expect(layout.totalLength == UInt64(image.count))
    let payloadEnd: UInt64 = 0x200 + 4099
    #expect(layout.payloadRange == 0x200..<payloadEnd)
    #expect(layout.hashedRange == 0..<payloadEnd)
    let payload = image[Int(layout.payloadRange.lowerBound)..<Int(layout.payloadRange.upperBound)]
    #expect(Array(payload) == (try MCUbootSampleImages.bytes("raw-4099B.bin")))
  }

  @Test func parsesTheEd25519ImgtoolImage() throws {
    let image = try MCUbootSampleImages.bytes("mcuboot-ed25519-100KiB.bin")
    let layout = try MCUbootImageLayout(parsing: image)
    #expect(layout.header.version == Version(major: 2, minor: 0, revision: 1, build: 7))
    #expect(layout.header.imageSize == 100 * 1024)
    #expect(layout.header.protectedTLVSize == 12)
    #expect(layout.protectedTLVs == [MCUbootTLV(type: .securityCounter, value: [3, 0, 0, 0])])
    #expect(layout.unprotectedTLVs.map(\.type) == [.sha256, .keyHash, .ed25519])
    #expect(layout.signatureTLVs.map(\.type) == [.keyHash, .ed25519])
    #expect(layout.signatureTLVs.map(\.value.count) == [32, 64])
    let payloadEnd: UInt64 = 0x200 + 100 * 1024
    #expect(layout.hashedRange == 0..<payloadEnd + 12)
    #expect(layout.protectedTLVRange == payloadEnd..<payloadEnd + 12)
    #expect(layout.totalLength == UInt64(image.count))
  }

  @Test func parsesTheECDSAImgtoolImage() throws {
    let image = try MCUbootSampleImages.bytes("mcuboot-ecdsa-p256-1B.bin")
    let layout = try MCUbootImageLayout(parsing: image)
    #expect(layout.header.version == Version(major: 0, minor: 9, revision: 0, build: 1))
    #expect(layout.header.headerSize == 32)
    #expect(layout.header.imageSize == 1)
    #expect(layout.unprotectedTLVs.map(\.type) == [.sha256, .keyHash, .ecdsaSignature])
    #expect(layout.signatureTLVs.map(\.type) == [.keyHash, .ecdsaSignature])
    // A DER-encoded ECDSA signature: SEQUENCE of two INTEGERs, 70 to 72 bytes for P-256.
    let signature = try #require(layout.signatureTLVs.last?.value)
    #expect((70...72).contains(signature.count))
    #expect(signature.first == 0x30)
    #expect(layout.totalLength == UInt64(image.count))
  }

  @Test(arguments: MCUbootSampleImages.mcuboot)
  func reencodesARealImageByteForByte(name: String) throws {
    let image = try MCUbootSampleImages.bytes(name)
    let layout = try MCUbootImageLayout(parsing: image)
    var encoded: [UInt8] = []
    layout.header.append(to: &encoded)
    encoded += image[MCUbootHeader.byteCount..<Int(layout.header.tlvOffset)]
    layout.appendTLVAreas(to: &encoded)
    #expect(encoded == image)

    let rebuilt = try MCUbootImageLayout(
      header: layout.header, protectedArea: layout.protectedArea, unprotectedArea: layout.unprotectedArea)
    #expect(rebuilt == layout)
  }

  @Test(arguments: MCUbootSampleImages.mcuboot)
  func ignoresBytesAfterTheImage(name: String) throws {
    let image = try MCUbootSampleImages.bytes(name)
    let padded = image + [UInt8](repeating: 0xff, count: 100)
    #expect(try MCUbootImageLayout(parsing: padded) == MCUbootImageLayout(parsing: image))
  }

  // MARK: - Refusals

  /// Every prefix that cuts the header or the TLV areas short is refused. (Cuts inside the payload
  /// are refused the same way; the 100 KiB one is sampled to keep the test quick.)
  @Test(arguments: MCUbootSampleImages.mcuboot)
  func refusesEveryTruncation(name: String) throws {
    let image = try MCUbootSampleImages.bytes(name)
    let layout = try MCUbootImageLayout(parsing: image)
    let tlvOffset = Int(layout.header.tlvOffset)
    let cuts =
      Array(0...MCUbootHeader.byteCount) + Array(stride(from: 0, to: tlvOffset, by: 97))
      + Array(tlvOffset..<image.count)
    var accepted: [Int] = []
    for length in cuts {
      do {
        _ = try MCUbootImageLayout(parsing: image.prefix(length))
        accepted.append(length)
      } catch {
        #expect(error.isMalformed, "length \(length): \(error)")
      }
    }
    #expect(accepted.isEmpty, "accepted truncations at \(accepted)")

    // The same through the layout's TLV-only entry point, as a verifier uses it.
    let tlvAreas = image[tlvOffset...]
    for length in 0..<tlvAreas.count {
      #expect(throws: WireError.self) {
        try MCUbootImageLayout(header: layout.header, tlvAreas: tlvAreas.prefix(length))
      }
    }
  }

  @Test func refusesABadMagic() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    image[0] ^= 0x01
    #expect(try malformedMessage(image)?.contains("magic") == true)
  }

  @Test(arguments: [0, 1, 31] as [UInt16])
  func refusesAHeaderSizeSmallerThanTheHeader(headerSize: UInt16) throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    image.setU16(headerSize, at: 8)
    #expect(try malformedMessage(image)?.contains("hdr_size is \(headerSize)") == true)
  }

  @Test func refusesSizesThatOverflow32Bits() throws {
    // [SEC-CHECK-11] [SEC-LIMIT-1]
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    image.setU32(0xffff_fe00, at: 12)  // img_size: hdr_size 0x200 + this = 2^32
    #expect(try malformedMessage(image)?.contains("overflow") == true)
  }

  @Test func refusesAnImageSizeRunningPastTheData() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    image.setU32(0x0100_0000, at: 12)
    #expect(try malformedMessage(image)?.contains("TLV areas at offset") == true)
  }

  @Test func refusesATLVLengthPastItsArea() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let sha = Int(try MCUbootImageLayout(parsing: image).header.tlvOffset) + 4
    image.setU16(33, at: sha + 2)  // SHA256 TLV claims 33 value bytes; its area has 32
    #expect(try malformedMessage(image)?.contains("declares 33 value bytes") == true)
  }

  @Test func refusesAWrongInfoMagic() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let info = Int(try MCUbootImageLayout(parsing: image).header.tlvOffset)
    image.setU16(0x6906, at: info)
    #expect(try malformedMessage(image)?.contains("info magic 0x6906") == true)
  }

  @Test func refusesAProtectedSizeThatDisagreesWithItsInfoHeader() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-ed25519-100KiB.bin")
    image.setU16(16, at: 10)  // header: protect_tlv_size 16, area's info header says 12
    #expect(try malformedMessage(image)?.contains("protect_tlv_size is 16") == true)
  }

  @Test func refusesAProtectedAreaTheHeaderDoesNotAnnounce() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-ed25519-100KiB.bin")
    image.setU16(0, at: 10)
    #expect(try malformedMessage(image)?.contains("protect_tlv_size is 0") == true)
  }

  @Test func refusesAProtectedSizeTooSmallForItsInfoHeader() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-ed25519-100KiB.bin")
    image.setU16(3, at: 10)
    #expect(try malformedMessage(image)?.contains("protect_tlv_size is 3") == true)
  }

  @Test func refusesAnAreaShorterThanItsInfoHeader() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let info = Int(try MCUbootImageLayout(parsing: image).header.tlvOffset)
    image.setU16(3, at: info + 2)
    #expect(try malformedMessage(image)?.contains("fewer than its own") == true)
  }

  @Test func refusesAnAreaLongerThanTheData() throws {
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let info = Int(try MCUbootImageLayout(parsing: image).header.tlvOffset)
    image.setU16(41, at: info + 2)
    #expect(try malformedMessage(image)?.contains("declares 41 bytes") == true)
  }

  @Test func refusesStrayBytesAtTheEndOfAnArea() throws {
    // An area of 4 + 36 + 2 bytes: the last 2 cannot hold a TLV header.
    var image = try MCUbootSampleImages.bytes("mcuboot-unsigned-4099B.bin")
    let info = Int(try MCUbootImageLayout(parsing: image).header.tlvOffset)
    image.setU16(42, at: info + 2)
    image += [0, 0]
    #expect(try malformedMessage(image)?.contains("stray bytes") == true)
  }

  /// Every single-byte change to the header and TLV areas of a real image either still decodes or
  /// is refused with `WireError`: none traps.
  @Test func survivesEverySingleByteCorruption() throws {
    let image = try MCUbootSampleImages.bytes("mcuboot-ed25519-100KiB.bin")
    let layout = try MCUbootImageLayout(parsing: image)
    let positions = Array(0..<MCUbootHeader.byteCount) + Array(Int(layout.header.tlvOffset)..<image.count)
    var refused = 0
    for position in positions {
      for value in [0x00, 0xff, image[position] ^ 0x80, image[position] &+ 1] as [UInt8] {
        var corrupt = image
        corrupt[position] = value
        do { _ = try MCUbootImageLayout(parsing: corrupt) } catch { refused += 1 }
      }
    }
    #expect(refused > 0)
  }

  // MARK: - Encoders

  @Test func roundTripsAHeaderWithEveryFieldSet() throws {
    let header = MCUbootHeader(
      loadAddress: 0xdead_beef, headerSize: 0xffff, protectedTLVSize: 0x1234, imageSize: 0x7fff_0000,
      flags: [.romFixed, .nonBootable, MCUbootHeader.Flags(rawValue: 0x8000_0000)],
      version: Version(major: 255, minor: 254, revision: 65535, build: 0xffff_fffe), reserved: 0x0102_0304)
    var bytes: [UInt8] = []
    header.append(to: &bytes)
    #expect(bytes.count == MCUbootHeader.byteCount)
    var reader = ByteReader(bytes)
    #expect(try MCUbootHeader(from: &reader) == header)
  }

  @Test(arguments: [MCUbootTLVArea.Kind.protected, .unprotected])
  func roundTripsATLVArea(kind: MCUbootTLVArea.Kind) throws {
    let area = try MCUbootTLVArea(
      kind: kind,
      entries: [
        MCUbootTLV(type: .dependency, value: [1, 0, 0, 0, 1, 2, 3, 0, 4, 0, 0, 0]),
        MCUbootTLV(type: MCUbootTLVType(rawValue: 0xfffe), value: []),
        MCUbootTLV(type: .bootRecord, value: Array(0..<200)),
      ])
    #expect(area.totalLength == 4 + (4 + 12) + 4 + (4 + 200))
    var bytes: [UInt8] = []
    area.append(to: &bytes)
    #expect(bytes.count == Int(area.totalLength))
    var reader = ByteReader(bytes)
    #expect(try MCUbootTLVArea(from: &reader, kind: kind) == area)
    #expect(reader.isAtEnd)
  }

  @Test func buildsAnImageFromPartsAndParsesItBack() throws {
    let payload: [UInt8] = Array(repeating: 0x5a, count: 1000)
    let protectedArea = try MCUbootTLVArea(
      kind: .protected, entries: [MCUbootTLV(type: .securityCounter, value: [9, 0, 0, 0])])
    let unprotectedArea = try MCUbootTLVArea(
      kind: .unprotected, entries: [MCUbootTLV(type: .sha256, value: Array(repeating: 0, count: 32))])
    let header = MCUbootHeader(
      headerSize: 0x40, protectedTLVSize: protectedArea.totalLength, imageSize: UInt32(payload.count),
      version: Version(major: 3, minor: 1, revision: 4, build: 15))
    let layout = try MCUbootImageLayout(
      header: header, protectedArea: protectedArea, unprotectedArea: unprotectedArea)

    var image: [UInt8] = []
    header.append(to: &image)
    image += [UInt8](repeating: 0, count: 0x40 - MCUbootHeader.byteCount) + payload
    layout.appendTLVAreas(to: &image)
    #expect(UInt64(image.count) == layout.totalLength)
    #expect(try MCUbootImageLayout(parsing: image) == layout)
  }

  @Test func refusesPartsThatDisagree() throws {
    let unprotectedArea = try MCUbootTLVArea(kind: .unprotected, entries: [])
    let header = MCUbootHeader(headerSize: 32, protectedTLVSize: 8, imageSize: 0, version: .zero)
    #expect(throws: WireError.self) {
      try MCUbootImageLayout(header: header, protectedArea: nil, unprotectedArea: unprotectedArea)
    }
    #expect(throws: WireError.self) {
      try MCUbootImageLayout(
        header: MCUbootHeader(headerSize: 32, imageSize: 0, version: .zero), protectedArea: nil,
        unprotectedArea: MCUbootTLVArea(kind: .protected, entries: []))
    }
  }

  @Test func refusesAnAreaTooLongForItsLengthField() {
    let big = MCUbootTLV(type: .bootRecord, value: Array(repeating: 0, count: Int(UInt16.max) - 7))
    #expect(throws: WireError.self) { try MCUbootTLVArea(kind: .unprotected, entries: [big]) }
    let fits = MCUbootTLV(type: .bootRecord, value: Array(repeating: 0, count: Int(UInt16.max) - 8))
    #expect(throws: Never.self) { try MCUbootTLVArea(kind: .unprotected, entries: [fits]) }
  }

  // MARK: - Helpers

  /// The message of the `.malformed` error decoding `image` fails with; nil if it decodes.
  private func malformedMessage(_ image: [UInt8]) throws -> String? {
    do {
      _ = try MCUbootImageLayout(parsing: image)
      return nil
    } catch {
      guard case .malformed(let message) = error else {
        Issue.record("expected .malformed, got \(error)")
        return nil
      }
      return message
    }
  }
}

/// The committed sample images, found relative to this file: Tests/OTAWireTests/ → package root.
enum MCUbootSampleImages {
  static let mcuboot = [
    "mcuboot-unsigned-4099B.bin", "mcuboot-ed25519-100KiB.bin", "mcuboot-ecdsa-p256-1B.bin",
  ]

  static let directory = RepositoryRoot.url
    .appendingPathComponent("Images")

  static func bytes(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
  }
}

extension WireError {
  fileprivate var isMalformed: Bool {
    if case .malformed = self { true } else { false }
  }
}

extension Array where Element == UInt8 {
  fileprivate mutating func setU16(_ value: UInt16, at offset: Int) {
    self[offset] = UInt8(truncatingIfNeeded: value)
    self[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
  }

  fileprivate mutating func setU32(_ value: UInt32, at offset: Int) {
    setU16(UInt16(truncatingIfNeeded: value), at: offset)
    setU16(UInt16(truncatingIfNeeded: value >> 16), at: offset + 2)
  }
}
