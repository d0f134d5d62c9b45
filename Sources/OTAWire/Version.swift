/// A firmware version as MCUboot's `image_version`: major u8, minor u8, revision u16, build u32.
/// Eight bytes on the wire; text form `major.minor.revision+build`.
public struct Version: Hashable, Comparable, Sendable, CustomStringConvertible {
  public static let byteCount = 8
  public static let zero = Version(major: 0, minor: 0, revision: 0, build: 0)

  public var major: UInt8
  public var minor: UInt8
  public var revision: UInt16
  public var build: UInt32

  public init(major: UInt8, minor: UInt8, revision: UInt16, build: UInt32 = 0) {
    self.major = major
    self.minor = minor
    self.revision = revision
    self.build = build
  }

  public init(from reader: inout ByteReader) throws(WireError) {
    major = try reader.readU8()
    minor = try reader.readU8()
    revision = try reader.readU16()
    build = try reader.readU32()
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU8(major)
    bytes.appendU8(minor)
    bytes.appendU16(revision)
    bytes.appendU32(build)
  }

  /// Parses `1.2.3+4`, `1.2.3` or `1.2`; every part must fit its field.
  public init?(text: String) {
    let mainAndBuild = text.split(separator: "+", omittingEmptySubsequences: false)
    guard mainAndBuild.count <= 2 else { return nil }
    let parts = mainAndBuild[0].split(separator: ".", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count),
      let major = UInt8(parts[0]),
      let minor = parts.count > 1 ? UInt8(parts[1]) : 0,
      let revision = parts.count > 2 ? UInt16(parts[2]) : 0,
      let build = mainAndBuild.count == 2 ? UInt32(mainAndBuild[1]) : 0
    else { return nil }
    self.init(major: major, minor: minor, revision: revision, build: build)
  }

  public var description: String { "\(major).\(minor).\(revision)+\(build)" }

  /// A total order: major, then minor, revision and build.
  public static func < (lhs: Version, rhs: Version) -> Bool {
    (lhs.major, lhs.minor, lhs.revision, lhs.build) < (rhs.major, rhs.minor, rhs.revision, rhs.build)
  }
}
