import OTAStorage
import OTATrust
import OTAWire

/// A slot as the image checks read it: the storage's reader, whose failures stay `StorageError`s.
public struct SlotImageSource: ImageSource {
  public let reader: any SlotReader

  public init(_ reader: any SlotReader) { self.reader = reader }

  public var capacity: UInt64 { reader.capacity }

  /// Exactly `count` bytes; a reader that returns fewer breaks `SlotReader`'s contract and is
  /// reported as a read outside the slot.
  public func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
    let bytes = try reader.read(at: offset, count: count)
    guard bytes.count == count else {
      throw .outOfBounds(offset: offset, count: count, capacity: reader.capacity)
    }
    return bytes
  }
}

/// The image checks over a slot, for the callers that hold the storage's reader.
extension ImageVerifier {
  public static func verify(
    reader: any SlotReader, size: UInt64, expectedCRC: UInt32, preparedVersion: Version,
    policy: ImagePolicy = .integrityOnly, installed: InstalledImage = .none, sealing: Bool = false,
    payload: PayloadView = .asStored, chunkSize: Int = 1 << 20
  ) throws(StorageError) -> ImageVerdict {
    try verify(
      reader: SlotImageSource(reader), size: size, expectedCRC: expectedCRC, preparedVersion: preparedVersion,
      policy: policy, installed: installed, sealing: sealing, payload: payload, chunkSize: chunkSize)
  }

  public static func survey(reader: any SlotReader, policy: ImagePolicy) throws(StorageError) -> SlotEvidence
  {
    try survey(reader: SlotImageSource(reader), policy: policy)
  }

  /// As `survey`, with a read failure as evidence (`.unreadable`) rather than an error: a slot
  /// that cannot be read must not stop a device from booting the other. A power cut still throws.
  public static func surveyTolerant(_ open: () throws(StorageError) -> any SlotReader, policy: ImagePolicy)
    throws(StorageError) -> SlotEvidence
  {
    do {
      return try survey(reader: try open(), policy: policy)
    } catch .powerCut {
      throw .powerCut
    } catch {
      return .unreadable("\(error)")
    }
  }
}
