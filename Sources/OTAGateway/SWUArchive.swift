/// An SWUpdate archive (`.swu`): a cpio archive in the "new ASCII" format, magic 070701 (no
/// checksum) or 070702 (each member's byte sum), whose first member is `sw-description`. Each
/// member is a 110-byte header of hexadecimal fields, its name (NUL-terminated, padded to 4 bytes),
/// its bytes (padded to 4); the member `TRAILER!!!` ends it. Read with every length checked against
/// what is there: a hostile or truncated archive is refused, never read past.
public struct SWUArchive: Equatable, Sendable {
  public struct Member: Equatable, Sendable {
    public var name: String
    public var bytes: [UInt8]
    public init(name: String, bytes: [UInt8]) {
      self.name = name
      self.bytes = bytes
    }
  }

  public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(at: Int)
    case badMagic(at: Int)
    case badField(String, at: Int)
    case badChecksum(member: String)
    case noTrailer
    case descriptionNotFirst(String?)

    public var description: String {
      switch self {
      case .truncated(let offset): "the archive ends inside a member (byte \(offset))"
      case .badMagic(let offset): "not a cpio 'newc' archive (no 070701 or 070702 at byte \(offset))"
      case .badField(let field, let offset): "the cpio header at byte \(offset) has an unreadable \(field)"
      case .badChecksum(let member): "the member \(member) fails its cpio checksum"
      case .noTrailer: "the archive has no TRAILER!!! member"
      case .descriptionNotFirst(let first):
        "the first member is \(first.map { "'\($0)'" } ?? "missing"), not sw-description: not an SWUpdate file"
      }
    }
  }

  public static let descriptionName = "sw-description"
  static let headerSize = 110
  static let trailer = "TRAILER!!!"

  public var members: [Member]
  public init(members: [Member]) { self.members = members }

  public func member(named name: String) -> Member? { members.first { $0.name == name } }

  /// Reads an archive, which must start with sw-description.
  public init(bytes: [UInt8]) throws(Failure) {
    var members: [Member] = []
    var offset = 0
    while true {
      guard bytes.count - offset >= Self.headerSize else { throw .truncated(at: offset) }
      let magic = String(decoding: bytes[offset..<offset + 6], as: UTF8.self)
      guard magic == "070701" || magic == "070702" else { throw .badMagic(at: offset) }
      let fields = try Self.fields(bytes, header: offset)
      let fileSize = fields[6]
      let nameSize = fields[11]
      let check = fields[12]
      guard nameSize >= 1, nameSize <= 4096 else { throw .badField("name size", at: offset) }
      let nameStart = offset + Self.headerSize
      guard bytes.count - nameStart >= nameSize else { throw .truncated(at: nameStart) }
      // UTF-8 text ending at its one NUL: decoded with replacement characters, other bytes made
      // another name (written back differently); a NUL inside, a name cpio reads as shorter.
      let nameBytes = bytes[nameStart..<nameStart + nameSize - 1]
      guard bytes[nameStart + nameSize - 1] == 0, !nameBytes.contains(0),
        let name = String(validating: nameBytes, as: UTF8.self)
      else { throw .badField("name", at: offset) }
      let dataStart = Self.padded(nameStart + nameSize)
      guard dataStart <= bytes.count, bytes.count - dataStart >= fileSize else {
        throw .truncated(at: dataStart)
      }
      let data = Array(bytes[dataStart..<dataStart + fileSize])
      if name == Self.trailer { break }
      if magic == "070702", Self.byteSum(data) != UInt32(truncatingIfNeeded: check) {
        throw .badChecksum(member: name)
      }
      members.append(Member(name: name, bytes: data))
      offset = Self.padded(dataStart + fileSize)
      if offset >= bytes.count { throw .noTrailer }
    }
    guard members.first?.name == Self.descriptionName else { throw .descriptionNotFirst(members.first?.name) }
    self.members = members
  }

  /// The 13 fields of a newc header, in order, as `badField` names them.
  static let fieldNames = [
    "inode", "mode", "uid", "gid", "nlink", "mtime", "file size", "devmajor", "devminor", "rdevmajor",
    "rdevminor", "name size", "checksum",
  ]

  /// The header's fields, each exactly 8 hexadecimal digits: no sign, no space, no prefix (what
  /// `Int(_:radix:)` would take), so every value is in 0...0xFFFFFFFF.
  static func fields(_ bytes: [UInt8], header offset: Int) throws(Failure) -> [Int] {
    var values: [Int] = []
    for (index, name) in fieldNames.enumerated() {
      guard let value = ASCIIHex.value(bytes[offset + 6 + index * 8..<offset + 14 + index * 8]) else {
        throw .badField(name, at: offset)
      }
      values.append(value)
    }
    return values
  }

  /// The archive's bytes: 070702 headers with each member's byte sum, as SWUpdate's own tools write
  /// them; modes 0644, times 0, so the same members always give the same bytes.
  public func bytes() -> [UInt8] {
    var out: [UInt8] = []
    for (index, member) in members.enumerated() {
      Self.append(name: member.name, bytes: member.bytes, inode: index + 1, mode: 0o100644, to: &out)
    }
    Self.append(name: Self.trailer, bytes: [], inode: 0, mode: 0, to: &out)
    return out
  }

  static func append(name: String, bytes: [UInt8], inode: Int, mode: Int, to out: inout [UInt8]) {
    let nameBytes = Array(name.utf8) + [0]
    let fields = [inode, mode, 0, 0, 1, 0, bytes.count, 0, 0, 0, 0, nameBytes.count, Int(byteSum(bytes))]
    out += Array("070702".utf8)
    for value in fields {
      let hex = String(value, radix: 16, uppercase: true)
      out += Array((String(repeating: "0", count: 8 - hex.count) + hex).utf8)
    }
    out += nameBytes
    out += [UInt8](repeating: 0, count: padded(out.count) - out.count)
    out += bytes
    out += [UInt8](repeating: 0, count: padded(out.count) - out.count)
  }

  static func padded(_ offset: Int) -> Int { (offset + 3) & ~3 }

  static func byteSum(_ bytes: [UInt8]) -> UInt32 {
    bytes.reduce(UInt32(0)) { $0 &+ UInt32($1) }
  }
}
