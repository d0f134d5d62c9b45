import OTAWire

/// A record kept in place in one file of two fixed places (offsets 0 and `placeSize`), written
/// alternately, each write a `RecordCopy` with the next sequence number. The reader takes the valid
/// copy with the higher sequence; a write the power cut tore fails its CRC and the other copy, the
/// previous state, stands. So an update costs one pwrite and one fdatasync (`RecordStore.overwrite`):
/// no temporary file, no rename, no directory sync. Only the file's creation (the first write) goes
/// through `replace`, durably, with the directory synced.
///
/// A write goes to the place that does not hold the standing copy, and a failed write is retried at
/// the same place: the standing copy is never the one being overwritten.
public struct AlternatingRecord: Sendable {
  /// Where the copy that stands was found or written.
  public struct Position: Equatable, Sendable {
    /// 0 or 1.
    public var place: Int
    public var sequence: UInt32

    public init(place: Int, sequence: UInt32) {
      self.place = place
      self.sequence = sequence
    }
  }

  /// Separate 4096-byte places: a disk page or flash sector torn in one never touches the other.
  public static let defaultPlaceSize = 4096

  public let name: String
  public let store: any RecordStore
  public let placeSize: Int
  /// The copy that stands on disk as last read or written; nil when there is no file (not yet
  /// loaded, removed, or found damaged): then the next write creates the file anew.
  public private(set) var standing: Position?

  public init(name: String, store: any RecordStore, placeSize: Int = defaultPlaceSize) {
    precondition(placeSize > RecordCopy.overhead, "a place must hold a copy")
    self.name = name
    self.store = store
    self.placeSize = placeSize
  }

  /// The largest payload a place holds.
  public var maximumPayload: Int { placeSize - RecordCopy.overhead }

  /// Reads the file and remembers which copy stands.
  public mutating func load() throws(StorageError) -> Loaded<[UInt8]> {
    let read = Self.newest(in: try store.load(name), placeSize: placeSize)
    standing = read.value?.position
    return read.map { $0.copy.payload }
  }

  /// The standing copy of a file's bytes (nil: no file): the valid copy with the higher sequence.
  /// Damaged when the file exists but neither place holds a valid copy.
  public static func newest(in bytes: [UInt8]?, placeSize: Int) -> Loaded<
    (position: Position, copy: RecordCopy)
  > {
    guard let bytes else { return .missing }
    var best: (position: Position, copy: RecordCopy)?
    var reasons: [String] = []
    for place in 0..<2 {
      let start = min(bytes.count, place * placeSize)
      let end = min(bytes.count, start + placeSize)
      do {
        let copy = try RecordCopy(bytes: bytes[start..<end])
        if let current = best, !copy.isNewer(than: current.copy) { continue }
        best = (Position(place: place, sequence: copy.sequence), copy)
      } catch {
        reasons.append("place \(place): \(error.reason)")
      }
    }
    guard let best else { return .damaged(reason: reasons.joined(separator: "; ")) }
    return .present(best)
  }

  /// Writes `payload` as the next copy, over the older one, durably. The first write (no standing
  /// copy) creates the whole file, both places, through `replace`.
  public mutating func write(_ payload: [UInt8]) throws(StorageError) {
    guard payload.count <= maximumPayload else {
      throw .tooLarge(size: UInt64(payload.count), capacity: UInt64(maximumPayload))
    }
    guard let standing else {
      let copy = RecordCopy(sequence: 1, payload: payload)
      var file = copy.encoded
      file.append(contentsOf: repeatElement(0, count: 2 * placeSize - file.count))
      try store.replace(name, with: file)
      self.standing = Position(place: 0, sequence: copy.sequence)
      return
    }
    let next = Position(place: 1 - standing.place, sequence: standing.sequence &+ 1)
    try store.overwrite(
      name, at: next.place * placeSize, with: RecordCopy(sequence: next.sequence, payload: payload).encoded)
    self.standing = next
  }

  /// Removes the file (unlink, directory sync); the next write creates it again.
  public mutating func remove() throws(StorageError) {
    try store.remove(name)
    standing = nil
  }

  /// Renames a damaged file aside (`name.damaged`); the next write creates it again.
  public mutating func moveAside() throws(StorageError) {
    try store.moveAside(name)
    standing = nil
  }
}
