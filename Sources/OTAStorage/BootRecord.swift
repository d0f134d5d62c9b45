import OTAChecksum
import OTAWire

/// Which slot boots and what each slot holds, persisted through a `RecordStore`.
/// Interim scope (the boot stage with attempt counting and rollback reasons builds on it): a confirmed
/// slot, an optional slot pending its trial boot, and the version of each slot that holds an image.
///
/// Layout (28 bytes, little-endian; written to disk: never reorder):
///     0 magic "OTAB"  4 format u8 = 1  5 confirmed slot u8  6 pending slot u8 (0xFF: none)
///     7 valid-slot bits u8 (bit n: slot n holds an image)  8 slot A version (8)  16 slot B version (8)
///     24 CRC32 of bytes 0..<24
public struct BootRecord: Equatable, Sendable {
  public static let recordName = "boot.record"
  public static let byteCount = 28
  static let magic: [UInt8] = Array("OTAB".utf8)
  static let format: UInt8 = 1
  static let noSlot: UInt8 = 0xFF

  public var confirmed: SlotID
  public var pending: SlotID?
  /// The version in each slot, nil where the slot holds no valid image.
  public var versions: [Version?]

  public init(confirmed: SlotID, pending: SlotID? = nil, versions: [Version?]) {
    precondition(versions.count == SlotID.allCases.count)
    self.confirmed = confirmed
    self.pending = pending
    self.versions = versions
  }

  /// A device that has never been updated: it runs slot A, whose version is `runningVersion`.
  public static func factory(runningVersion: Version) -> BootRecord {
    BootRecord(confirmed: .a, versions: [runningVersion, nil])
  }

  /// The slot that runs: the pending one while its trial lasts, else the confirmed one.
  public var running: SlotID { pending ?? confirmed }
  public var runningOnTrial: Bool { pending != nil }

  public func version(of slot: SlotID) -> Version? { versions[Int(slot.rawValue)] }

  /// Before a slot's first byte is overwritten it stops counting as a bootable image.
  public mutating func invalidate(_ slot: SlotID) {
    precondition(slot != running, "the running slot is never invalidated")
    versions[Int(slot.rawValue)] = nil
  }

  /// Points the next boot at `slot`: for a trial, or for good when `permanent`.
  public mutating func activate(_ slot: SlotID, version: Version, permanent: Bool) {
    versions[Int(slot.rawValue)] = version
    if permanent {
      confirmed = slot
      pending = nil
    } else {
      pending = slot
    }
  }

  /// The running trial slot becomes the confirmed one. Confirming a confirmed slot changes nothing.
  public mutating func confirmRunning() {
    confirmed = running
    pending = nil
  }

  public init(bytes: [UInt8]) throws(WireError) {
    guard bytes.count == Self.byteCount else {
      throw .malformed("boot record is \(bytes.count) bytes, expected \(Self.byteCount)")
    }
    var reader = ByteReader(bytes)
    guard Array(try reader.readBytes(4)) == Self.magic else { throw .malformed("boot record magic") }
    guard try reader.readU8() == Self.format else { throw .malformed("boot record format") }
    let rawConfirmed = try reader.readU8()
    let rawPending = try reader.readU8()
    let validBits = try reader.readU8()
    let versionA = try Version(from: &reader)
    let versionB = try Version(from: &reader)
    guard try reader.readU32() == CRC32.checksum(bytes[0..<24]) else {
      throw .malformed("boot record checksum")
    }
    guard let confirmed = SlotID(rawValue: rawConfirmed), validBits & ~0b11 == 0 else {
      throw .malformed("boot record fields")
    }
    let pending: SlotID?
    if rawPending == Self.noSlot {
      pending = nil
    } else if let slot = SlotID(rawValue: rawPending) {
      pending = slot
    } else {
      throw .malformed("boot record pending slot \(rawPending)")
    }
    self.confirmed = confirmed
    self.pending = pending
    versions = [validBits & 1 != 0 ? versionA : nil, validBits & 2 != 0 ? versionB : nil]
    guard version(of: running) != nil else { throw .malformed("boot record runs an empty slot") }
  }

  public var encoded: [UInt8] {
    var bytes = Self.magic
    bytes.appendU8(Self.format)
    bytes.appendU8(confirmed.rawValue)
    bytes.appendU8(pending?.rawValue ?? Self.noSlot)
    var validBits: UInt8 = 0
    for slot in SlotID.allCases where version(of: slot) != nil { validBits |= 1 << slot.rawValue }
    bytes.appendU8(validBits)
    for slot in SlotID.allCases { (version(of: slot) ?? .zero).append(to: &bytes) }
    bytes.appendU32(CRC32.checksum(bytes))
    return bytes
  }
}
