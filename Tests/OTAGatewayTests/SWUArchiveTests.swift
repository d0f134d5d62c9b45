import Foundation
import OTAGateway
import OTATestSupport
import OTAWire
import Testing

/// The .swu container: cpio's "newc" format, read and written; checked against GNU cpio.
struct SWUArchiveTests {
  static let members = [
    SWUArchive.Member(name: "sw-description", bytes: Array("software = { version = \"1.0.0+0\"; };\n".utf8)),
    SWUArchive.Member(name: "firmware.bin", bytes: SeededGenerator.bytes(1001, seed: 7)),
    SWUArchive.Member(name: "empty", bytes: []),
  ]

  @Test func whatIsWrittenReadsBack() throws {
    let bytes = SWUArchive(members: Self.members).bytes()
    #expect(bytes.count % 4 == 0)
    #expect(Array(bytes.prefix(6)) == Array("070702".utf8))
    #expect(try SWUArchive(bytes: bytes).members == Self.members)
  }

  @Test func gnuCpioExtractsWhatWeWriteAndChecksTheSums() throws {
    let folder = try TemporaryDirectory(label: "swu-cpio")
    defer { folder.remove() }
    let archive = try folder.write(SWUArchive(members: Self.members).bytes(), "a.swu")
    // -H crc: GNU cpio verifies each member's checksum as it extracts.
    let status = try Self.run(["cpio", "-i", "-H", "crc", "--quiet", "-F", archive], in: folder.path)
    #expect(status == 0)
    #expect(try folder.read("firmware.bin") == Self.members[1].bytes)
    #expect(try folder.read("sw-description") == Self.members[0].bytes)
  }

  @Test func weReadWhatGnuCpioWrites() throws {
    let folder = try TemporaryDirectory(label: "swu-cpio")
    defer { folder.remove() }
    try folder.write(Self.members[0].bytes, "sw-description")
    try folder.write(Self.members[1].bytes, "firmware.bin")
    try folder.write(Array("sw-description\nfirmware.bin\n".utf8), "list")
    for format in ["newc", "crc"] {
      let status = try Self.run(
        ["sh", "-c", "cpio -o -H \(format) --quiet < list > out-\(format).swu"], in: folder.path)
      #expect(status == 0)
      let read = try SWUArchive(bytes: try folder.read("out-\(format).swu"))
      #expect(read.members.map(\.name) == ["sw-description", "firmware.bin"])
      #expect(read.member(named: "firmware.bin")?.bytes == Self.members[1].bytes)
    }
  }

  @Test func everyPrefixIsRefusedNeverReadPast() throws {
    let bytes = SWUArchive(members: Self.members).bytes()
    for length in stride(from: 0, to: bytes.count, by: 7) {
      #expect(throws: SWUArchive.Failure.self, "\(length)") {
        try SWUArchive(bytes: Array(bytes.prefix(length)))
      }
    }
  }

  @Test func aChangedByteFailsItsMembersChecksum() throws {
    var bytes = SWUArchive(members: Self.members).bytes()
    let data = Self.members[1].bytes
    let start = try #require(
      bytes.indices.first { bytes.count - $0 >= 16 && Array(bytes[$0..<$0 + 16]) == Array(data.prefix(16)) })
    bytes[start + 500] ^= 0x01
    #expect(throws: SWUArchive.Failure.badChecksum(member: "firmware.bin")) { try SWUArchive(bytes: bytes) }
  }

  @Test func hostileHeadersAreRefused() throws {
    var bytes = SWUArchive(members: Self.members).bytes()
    // The file size field of the first member: 8 hex digits at offset 54, made enormous.
    bytes.replaceSubrange(54..<62, with: Array("7FFFFFFF".utf8))
    #expect(throws: SWUArchive.Failure.self) { try SWUArchive(bytes: bytes) }
    var magic = SWUArchive(members: Self.members).bytes()
    magic[0] = UInt8(ascii: "1")
    #expect(throws: SWUArchive.Failure.badMagic(at: 0)) { try SWUArchive(bytes: magic) }
    var hex = SWUArchive(members: Self.members).bytes()
    hex.replaceSubrange(54..<62, with: Array("0000zz00".utf8))
    #expect(throws: SWUArchive.Failure.badField("file size", at: 0)) { try SWUArchive(bytes: hex) }
  }

  /// Seen on a gateway: a member whose file size field was `-0000001` (`Int(_:radix:)` reads a
  /// sign) made the reader slice `data..<data - 1` and trap, and the artifact, its hash honest, was
  /// opened again from the cache at every start. Run in a child process: before the fix it died of
  /// "Range requires lowerBound <= upperBound"; now the field is refused by name and it exits 0.
  @Test func aNegativeFileSizeIsRefusedNotATrap() async {
    // [SEC-ATK-63]
    await #expect(processExitsWith: .success) {
      for member in 0..<2 {
        var bytes = SWUArchive(members: SWUArchiveTests.members).bytes()
        let header = try SWUArchiveTests.headerOffsets(bytes)[member]
        bytes.replaceSubrange(header + 54..<header + 62, with: Array("-0000001".utf8))
        do {
          _ = try SWUArchive(bytes: bytes)
          throw HeaderFieldAccepted(field: "file size")
        } catch let failure as SWUArchive.Failure {
          guard failure == .badField("file size", at: header) else { throw failure }
        }
      }
    }
  }

  struct HeaderFieldAccepted: Error { var field: String }

  /// The 13 fields of a newc header, in order: each is exactly 8 hexadecimal digits, so a sign, a
  /// space or any other byte in any of them is refused, naming the field.
  static let fieldNames = [
    "inode", "mode", "uid", "gid", "nlink", "mtime", "file size", "devmajor", "devminor", "rdevmajor",
    "rdevminor", "name size", "checksum",
  ]

  @Test(arguments: 0..<13)
  func everyHeaderFieldIsEightHexDigitsWithoutSign(field: Int) throws {
    let written = SWUArchive(members: Self.members).bytes()
    let header = try Self.headerOffsets(written)[1]
    for text in ["+0000001", "-0000000", " 0000001", "0000001 ", "0x000001", "0000000g"] {
      var bytes = written
      let start = header + 6 + field * 8
      bytes.replaceSubrange(start..<start + 8, with: Array(text.utf8))
      #expect(throws: SWUArchive.Failure.badField(Self.fieldNames[field], at: header), "\(text)") {
        _ = try SWUArchive(bytes: bytes)
      }
    }
  }

  /// A member's name is UTF-8 text ending at its one NUL. Read with replacement characters, a name
  /// of bytes that are no UTF-8 became another name, which the archive then wrote differently (found
  /// by the swu target's layout check, Regressions/swu/member-name-not-utf8); a NUL inside it made a
  /// name cpio and SWUpdate read as shorter.
  @Test(arguments: [[0x66, 0x77, 0xFF, 0x62, 0x69, 0x6E], [0x66, 0x77, 0x00, 0x62, 0x69, 0x6E]])
  func aMemberNameIsUTF8WithoutNUL(name: [UInt8]) throws {
    var bytes = SWUArchive(members: Self.members).bytes()
    let header = try Self.headerOffsets(bytes)[1]
    #expect(Array(bytes[header + 110..<header + 116]) == Array("firmwa".utf8))
    bytes.replaceSubrange(header + 110..<header + 116, with: name)
    #expect(throws: SWUArchive.Failure.badField("name", at: header)) { _ = try SWUArchive(bytes: bytes) }
  }

  /// Where each member's header starts, found by walking the archive as written (names and data
  /// padded to 4 bytes).
  static func headerOffsets(_ bytes: [UInt8]) throws -> [Int] {
    var offsets: [Int] = []
    var offset = 0
    while offset + 110 <= bytes.count {
      offsets.append(offset)
      let field = { (index: Int) in
        Int(
          String(decoding: bytes[offset + 6 + index * 8..<offset + 14 + index * 8], as: UTF8.self), radix: 16)
      }
      let fileSize = try #require(field(6))
      let nameSize = try #require(field(11))
      offset = (((offset + 110 + nameSize + 3) & ~3) + fileSize + 3) & ~3
    }
    return offsets
  }

  @Test func anArchiveWithoutSWDescriptionFirstIsNoSWUpdateFile() throws {
    let swapped = SWUArchive(members: [Self.members[1], Self.members[0]]).bytes()
    #expect(throws: SWUArchive.Failure.descriptionNotFirst("firmware.bin")) { try SWUArchive(bytes: swapped) }
  }

  static func run(_ arguments: [String], in directory: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }
}
