import OTAChecksum
import OTAWire

/// The durable record of a transfer in progress: enough to resume after a restart or a power cut.
/// It is written after each committed window, and only after the window's data is synced, so
/// `committedOffset` never claims bytes that are not durable. Where it is kept (OTABoot's
/// `TransferJournalStore`) is not this value's business.
///
/// Layout (32 bytes, little-endian; written to disk: never reorder):
///     0 magic "OTAJ"   4 format u8 = 2   5 slot u8   6 state u8   7 owner u8 (`TransferOwner`)
///     8 size u32       12 crc32 u32      16 version (8)           24 committed offset u32
///     28 CRC32 of bytes 0..<28
/// Format 1 (byte 7 reserved, 0) is still read: its owner is SMP when its CRC32 is 0 (an SMP
/// upload's journal says 0 until its last chunk), else the OTA protocol.
public struct TransferJournal: Equatable, Sendable {
  public static let byteCount = 32
  static let magic: [UInt8] = Array("OTAJ".utf8)
  static let format: UInt8 = 2

  /// The slot being written: the one that was inactive when the transfer was prepared.
  public var slot: SlotID
  /// `.receiving` or `.validated`.
  public var state: DeviceState
  public var size: UInt32
  public var crc32: UInt32
  public var version: Version
  public var committedOffset: UInt32
  /// The protocol whose session began the transfer: only it may resume it after a restart.
  public var owner: TransferOwner

  public init(
    slot: SlotID, state: DeviceState, size: UInt32, crc32: UInt32, version: Version, committedOffset: UInt32,
    owner: TransferOwner = .ota
  ) {
    self.owner = owner
    self.slot = slot
    self.state = state
    self.size = size
    self.crc32 = crc32
    self.version = version
    self.committedOffset = committedOffset
  }

  /// Decodes a record read from disk, trusting nothing: a damaged record throws and must not be used.
  public init(bytes: [UInt8]) throws(WireError) {
    guard bytes.count == Self.byteCount else {
      throw .malformed("journal is \(bytes.count) bytes, expected \(Self.byteCount)")
    }
    let stored = CRC32.checksum(bytes[0..<28])
    var reader = ByteReader(bytes)
    guard Array(try reader.readBytes(4)) == Self.magic else { throw .malformed("journal magic") }
    let format = try reader.readU8()
    guard format == 1 || format == Self.format else { throw .malformed("journal format \(format)") }
    let rawSlot = try reader.readU8()
    let rawState = try reader.readU8()
    let rawOwner = try reader.readU8()
    size = try reader.readU32()
    crc32 = try reader.readU32()
    if format == 1 {
      guard rawOwner == 0 else { throw .malformed("journal reserved byte") }
      owner = crc32 == 0 ? .smp : .ota
    } else {
      guard let owner = TransferOwner(rawValue: rawOwner) else {
        throw .malformed("journal owner \(rawOwner)")
      }
      self.owner = owner
    }
    version = try Version(from: &reader)
    committedOffset = try reader.readU32()
    guard try reader.readU32() == stored else { throw .malformed("journal checksum") }
    guard let slot = SlotID(rawValue: rawSlot) else { throw .malformed("journal slot \(rawSlot)") }
    guard let state = DeviceState(rawValue: rawState), state == .receiving || state == .validated else {
      throw .malformed("journal state \(rawState)")
    }
    guard size > 0, committedOffset <= size, state == .receiving || committedOffset == size else {
      throw .malformed("journal offsets: committed \(committedOffset) of \(size)")
    }
    self.slot = slot
    self.state = state
  }

  public var encoded: [UInt8] {
    var bytes = Self.magic
    bytes.reserveCapacity(Self.byteCount)
    bytes.appendU8(Self.format)
    bytes.appendU8(slot.rawValue)
    bytes.appendU8(state.rawValue)
    bytes.appendU8(owner.rawValue)
    bytes.appendU32(size)
    bytes.appendU32(crc32)
    version.append(to: &bytes)
    bytes.appendU32(committedOffset)
    bytes.appendU32(CRC32.checksum(bytes))
    return bytes
  }
}
