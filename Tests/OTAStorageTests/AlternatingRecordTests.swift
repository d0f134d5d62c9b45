import OTAChecksum
import OTAStorageTesting
import OTAWire
import Testing

@testable import OTAStorage

@Suite("AlternatingRecord: two copies in place")
struct AlternatingRecordTests {
  static let placeSize = 64

  /// A file of two places holding `first` and `second` (nil: a never-written, zeroed place).
  static func file(_ first: RecordCopy?, _ second: RecordCopy?) -> [UInt8] {
    var bytes: [UInt8] = []
    for copy in [first, second] {
      var place = copy?.encoded ?? []
      place.append(contentsOf: repeatElement(0, count: placeSize - place.count))
      bytes += place
    }
    return bytes
  }

  static func newest(_ bytes: [UInt8]?) -> Loaded<RecordCopy> {
    AlternatingRecord.newest(in: bytes, placeSize: placeSize).map { $0.copy }
  }

  // MARK: One copy

  @Test func aCopyRoundTripsAndAnyChangedByteFailsIt() throws {
    let copy = RecordCopy(sequence: 0x0102_0304, payload: Array(1...32))
    let encoded = copy.encoded
    #expect(encoded.count == RecordCopy.overhead + 32)
    #expect(Array(encoded.prefix(12)) == Array("OTAR".utf8) + [4, 3, 2, 1, 32, 0, 0, 0])
    #expect(try RecordCopy(bytes: encoded[...]) == copy)
    #expect(try RecordCopy(bytes: (encoded + [9, 9, 9])[...]) == copy)  // The rest of a place is ignored.
    for index in encoded.indices {
      for bit in 0..<8 {
        var damaged = encoded
        damaged[index] ^= 1 << bit
        #expect(throws: WireError.self, "byte \(index) bit \(bit)") { try RecordCopy(bytes: damaged[...]) }
      }
    }
  }

  @Test func everyShortPrefixOfACopyFails() {
    let encoded = RecordCopy(sequence: 7, payload: [1, 2, 3, 4, 5]).encoded
    for count in 0..<encoded.count {
      #expect(throws: WireError.self, "\(count) bytes") { try RecordCopy(bytes: encoded.prefix(count)) }
    }
  }

  @Test func aLengthBeyondThePlaceFailsAndDoesNotTrap() {
    var bytes = RecordCopy(sequence: 1, payload: [1]).encoded
    bytes.replaceSubrange(8..<12, with: [0xFF, 0xFF, 0xFF, 0xFF])
    #expect(throws: WireError.self) { try RecordCopy(bytes: bytes[...]) }
  }

  @Test func sequencesCompareAcrossTheWrap() {
    // [P-DISK-4]
    let last = RecordCopy(sequence: .max, payload: [])
    let wrapped = RecordCopy(sequence: 0, payload: [])
    #expect(wrapped.isNewer(than: last))
    #expect(!last.isNewer(than: wrapped))
    #expect(RecordCopy(sequence: 5, payload: []).isNewer(than: RecordCopy(sequence: 4, payload: [])))
    #expect(!RecordCopy(sequence: 4, payload: []).isNewer(than: RecordCopy(sequence: 4, payload: [])))
  }

  // MARK: Two places

  @Test func theValidCopyWithTheHigherSequenceStandsInEitherPlace() {
    // [P-DISK-4]
    let old = RecordCopy(sequence: 1, payload: [1])
    let new = RecordCopy(sequence: 2, payload: [2])
    #expect(Self.newest(Self.file(old, new)) == .present(new))
    #expect(Self.newest(Self.file(new, old)) == .present(new))
    let beforeWrap = RecordCopy(sequence: .max, payload: [3])
    let afterWrap = RecordCopy(sequence: 0, payload: [4])
    #expect(Self.newest(Self.file(beforeWrap, afterWrap)) == .present(afterWrap))
    #expect(Self.newest(Self.file(afterWrap, beforeWrap)) == .present(afterWrap))
    #expect(Self.newest(nil) == .missing)
  }

  /// Ways a place can be found after a cut: intact, never written, torn at any byte (the new copy's
  /// prefix over the old one), one bit flipped, or cut off by the end of the file.
  enum PlaceDamage: CaseIterable {
    case intact, zeroed, torn, bitFlipped, cutOff

    /// The damaged place over `old` (what the place held before) and the file truncated if cut off.
    func apply(_ copy: RecordCopy, old: RecordCopy, tear: Int) -> [UInt8]? {
      var place = copy.encoded
      place.append(contentsOf: repeatElement(0, count: AlternatingRecordTests.placeSize - place.count))
      var previous = old.encoded
      previous.append(contentsOf: repeatElement(0, count: AlternatingRecordTests.placeSize - previous.count))
      switch self {
      case .intact: return place
      case .zeroed: return [UInt8](repeating: 0, count: place.count)
      case .torn: return Array(place.prefix(tear) + previous.dropFirst(tear))
      case .bitFlipped:
        place[tear % copy.encoded.count] ^= 0x20
        return place
      case .cutOff: return nil
      }
    }
  }

  @Test func bothCopiesTornInEveryWay() {
    // [P-DISK-4]
    let first = RecordCopy(sequence: 41, payload: Array(repeating: 0xA1, count: 20))
    let second = RecordCopy(sequence: 42, payload: Array(repeating: 0xB2, count: 20))
    let older = RecordCopy(sequence: 40, payload: Array(repeating: 0xC3, count: 9))
    var cases = 0
    for damage0 in PlaceDamage.allCases {
      for damage1 in PlaceDamage.allCases {
        // A tear anywhere inside the copy (the torn place is the new copy's prefix over the old).
        for tear in 1..<first.encoded.count {
          let place0 = damage0.apply(first, old: older, tear: tear)
          let place1 = damage1.apply(second, old: older, tear: tear)
          let bytes: [UInt8]
          switch (place0, place1) {
          case (let zero?, let one?): bytes = zero + one
          case (let zero?, nil): bytes = zero + Array(second.encoded.prefix(tear))
          case (nil, _): bytes = Array(first.encoded.prefix(tear))  // Cut off before place 1 too.
          }
          // The oracle compares bytes, not CRCs: a place stands when it is, byte for byte, a
          // whole copy that was written (the new one, or the old one a tear did not reach).
          func whole(_ place: [UInt8]?, _ copy: RecordCopy) -> RecordCopy? {
            guard let place else { return nil }
            for candidate in [copy, older]
            where Array(place.prefix(candidate.encoded.count)) == candidate.encoded {
              return candidate
            }
            return nil
          }
          let standing = [whole(place0, first), place0 == nil ? nil : whole(place1, second)].compactMap { $0 }
          let expected: Loaded<RecordCopy> =
            standing.max { $0.sequence < $1.sequence }.map { .present($0) } ?? .damaged(reason: "")
          let found = Self.newest(bytes)
          switch (found, expected) {
          case (.present(let copy), .present(let want)):
            #expect(copy == want, "\(damage0) \(damage1) \(tear)")
          case (.damaged, .damaged): break
          default: Issue.record("\(damage0) \(damage1) tear \(tear): \(found), expected \(expected)")
          }
          cases += 1
        }
      }
    }
    #expect(cases == 25 * (first.encoded.count - 1))
  }

  @Test func aShortFileKeepsTheFirstPlace() {
    let copy = RecordCopy(sequence: 3, payload: [7, 7])
    #expect(Self.newest(copy.encoded) == .present(copy))
    #expect(Self.newest(copy.encoded + [0, 0, 0]) == .present(copy))
    #expect(Self.newest([]).isDamaged)
    #expect(Self.newest(Array(copy.encoded.dropLast())).isDamaged)
  }

  // MARK: Through a record store

  @Test func writesAlternateAndTheFileIsCreatedOnce() throws {
    // [P-DISK-4]
    let medium = MemoryMedium(slotCapacity: 0)
    var record = AlternatingRecord(name: "r", store: medium, placeSize: Self.placeSize)
    #expect(try record.load() == .missing)
    try record.write([1])
    #expect(try medium.load("r")?.count == 2 * Self.placeSize)
    #expect(record.standing == .init(place: 0, sequence: 1))
    try record.write([2])
    #expect(record.standing == .init(place: 1, sequence: 2))
    try record.write([3])
    #expect(record.standing == .init(place: 0, sequence: 3))
    let operations = medium.operationCount
    try record.write([4])
    #expect(medium.operationCount == operations + 2)  // pwrite, fdatasync: no rename, no directory sync.
    var reread = AlternatingRecord(name: "r", store: medium, placeSize: Self.placeSize)
    #expect(try reread.load() == .present([4]))
    #expect(reread.standing == .init(place: 1, sequence: 4))
    #expect(throws: StorageError.self) { try record.write(Array(repeating: 0, count: Self.placeSize)) }
    try record.remove()
    #expect(try medium.load("r") == nil && record.standing == nil)
    try record.write([5])
    #expect(record.standing == .init(place: 0, sequence: 1))
  }

  @Test func overwritingAMissingRecordFails() {
    let medium = MemoryMedium(slotCapacity: 0)
    #expect(throws: StorageError.system(operation: "open", path: "memory:records/r", errno: .noSuchFile)) {
      try medium.overwrite("r", at: 0, with: [1])
    }
  }

  /// A cut at every operation of a run of writes, with every way the cut may keep, lose or tear what
  /// was not synced: the record reads as the last write that returned, or the one under way, never
  /// anything else, and writing on from there works.
  @Test func aCutAnywhereLeavesTheLastOrTheNextState() throws {
    let payloads = (1...6).map { index in [UInt8](repeating: UInt8(index), count: 24 + index) }
    // The run's operations: the first write creates the file by a replace (write, sync, rename,
    // directory sync), every later one writes its place in place (write, fdatasync).
    let operations = 4 + 2 * (payloads.count - 1)
    let seeds = [nil] + (0..<40).map { UInt64($0) }
    var cuts = 0
    for cut in 0..<operations {
      for seed in seeds {
        let medium = MemoryMedium(slotCapacity: 0)
        var record = AlternatingRecord(name: "r", store: medium, placeSize: Self.placeSize)
        medium.inject(.powerCut, atOperation: cut)
        var done: [UInt8]?
        var underWay: [UInt8]?
        for payload in payloads {
          underWay = payload
          do {
            try record.write(payload)
            done = payload
          } catch {
            #expect(error == .powerCut)
            cuts += 1
            break
          }
        }
        medium.reboot(seed: seed)
        var reread = AlternatingRecord(name: "r", store: medium, placeSize: Self.placeSize)
        let loaded = try reread.load()
        let at = "cut \(cut) seed \(String(describing: seed))"
        if let done {
          #expect(loaded == .present(done) || loaded == .present(underWay ?? done), "\(at): \(loaded)")
        } else {
          #expect(loaded == .missing || loaded == .present(payloads[0]), "\(at): \(loaded)")
        }
        try reread.write([0xEE])
        var after = AlternatingRecord(name: "r", store: medium, placeSize: Self.placeSize)
        #expect(try after.load() == .present([0xEE]), "\(at)")
      }
    }
    // Every planned cut falls inside the run's operations, so every one of them happens.
    #expect(cuts >= operations * seeds.count, "\(cuts) cuts")
  }
}
