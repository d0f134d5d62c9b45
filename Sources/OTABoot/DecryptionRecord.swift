import OTAChecksum
import OTAJournal
import OTAWire

/// Where the in-place decryption of an encrypted image stands, kept durably between blocks so that
/// a power cut at any instant loses nothing: the payload below `blockStart` is plaintext, above
/// the block ciphertext, and the block itself may be torn, so its ciphertext is kept here and its
/// plaintext written again from it on recovery (AES-CTR applied twice would undo itself, so the
/// slot's bytes alone could not say which half a torn block holds).
///
/// One record, replaced atomically before each block's plaintext is written:
///
///     magic "BODR" | format 1 | slot | 0 0 | size u32 | crc32 u32 | blockStart u64 |
///     length u32 | ciphertext (length bytes) | CRC32 of everything before, u32   (little-endian)
///
/// `size` and `crc32` are the transfer's (as sent): a record for any other transfer is stale.
public struct DecryptionRecord: Equatable, Sendable {
  public static let fileName = "decryption.scratch"
  static let magic = Array("BODR".utf8)
  static let format: UInt8 = 1

  public var slot: SlotID
  public var size: UInt32
  public var crc32: UInt32
  /// Slot offset of the block under way; the payload below it is plaintext.
  public var blockStart: UInt64
  /// The block's bytes as they were before its plaintext was written (empty once all is done).
  public var ciphertext: [UInt8]

  public init(slot: SlotID, size: UInt32, crc32: UInt32, blockStart: UInt64, ciphertext: [UInt8]) {
    self.slot = slot
    self.size = size
    self.crc32 = crc32
    self.blockStart = blockStart
    self.ciphertext = ciphertext
  }

  /// The slot offset below which the payload is plaintext once the block is written again.
  public var plaintextBelow: UInt64 { blockStart + UInt64(ciphertext.count) }

  /// True when the record belongs to the transfer `journal` describes.
  public func describes(_ journal: TransferJournal) -> Bool {
    slot == journal.slot && size == journal.size && crc32 == journal.crc32
  }

  public var encoded: [UInt8] {
    var bytes = Self.magic
    bytes.appendU8(Self.format)
    bytes.appendU8(slot.rawValue)
    bytes.appendU16(0)
    bytes.appendU32(size)
    bytes.appendU32(crc32)
    bytes.appendU64(blockStart)
    bytes.appendU32(UInt32(ciphertext.count))
    bytes += ciphertext
    bytes.appendU32(CRC32.checksum(bytes))
    return bytes
  }

  /// nil for anything but a whole, intact record of this format.
  public init?(bytes: [UInt8]) {
    guard bytes.count >= 32, bytes.starts(with: Self.magic) else { return nil }
    var reader = ByteReader(bytes)
    do {
      _ = try reader.readBytes(4)
      guard try reader.readU8() == Self.format, let slot = SlotID(rawValue: try reader.readU8()),
        try reader.readU16() == 0
      else { return nil }
      let size = try reader.readU32()
      let crc32 = try reader.readU32()
      let blockStart = try reader.readU64()
      let length = Int(try reader.readU32())
      guard bytes.count == 28 + length + 4 else { return nil }
      let ciphertext = Array(try reader.readBytes(length))
      let checksum = try reader.readU32()
      guard checksum == CRC32.checksum(bytes[..<(bytes.count - 4)]) else { return nil }
      self.init(slot: slot, size: size, crc32: crc32, blockStart: blockStart, ciphertext: ciphertext)
    } catch {
      return nil
    }
  }
}
