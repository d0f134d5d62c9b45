// How a memory slot remembers what a power cut could still take away, and how a reboot decides.

import OTAStorage
import OTAWire

/// One slot: what reads see now, what a reboot finds, and the writes in between.
struct MemorySlot: Sendable {
  /// The volatile bytes: every write so far.
  var current: [UInt8]
  /// The bytes on the medium as of the last sync.
  var durable: [UInt8]
  /// The writes since the last sync, oldest first: exactly what a power cut may keep or lose.
  var unsynced: [UnsyncedWrite] = []

  init(content: [UInt8]) {
    current = content
    durable = content
  }

  mutating func write(_ bytes: [UInt8], at start: Int) {
    current.replaceSubrange(start..<start + bytes.count, with: bytes)
    unsynced.append(UnsyncedWrite(offset: start, bytes: bytes, interrupted: false))
  }

  /// A write the power cut interrupted: invisible now, perhaps partly on the medium after reboot.
  mutating func interrupt(_ bytes: [UInt8], at start: Int) {
    unsynced.append(UnsyncedWrite(offset: start, bytes: bytes, interrupted: true))
  }

  /// Makes the volatile bytes durable by replaying the unsynced writes (cheaper than a full copy).
  mutating func sync() {
    for write in unsynced where !write.interrupted { write.apply(to: &durable, sectors: nil) }
    unsynced.removeAll()
  }

  /// Decides what survived a power cut; afterwards volatile and durable agree again.
  mutating func reboot(random: inout SeededGenerator?) {
    if var generator = random {
      UnsyncedWrite.settle(unsynced, onto: &durable, random: &generator)
      random = generator
    }
    current = durable
    unsynced.removeAll()
  }
}

/// A slot write (or a record's in-place write) that no sync has covered yet.
struct UnsyncedWrite: Sendable {
  static let sectorSize = 512

  /// Decides, write by write in order, which sectors reached the medium: each write whole, lost or
  /// torn in any order; the write the cut interrupted at most a prefix of its sectors.
  static func settle(
    _ writes: [UnsyncedWrite], onto durable: inout [UInt8], random generator: inout SeededGenerator
  ) {
    for write in writes {
      let count = write.sectorRanges.count
      let kept: [Bool]
      if write.interrupted {
        // The write was under way: the disk got some prefix of its sectors.
        let prefix = generator.next(below: count + 1)
        kept = (0..<count).map { $0 < prefix }
      } else {
        switch generator.next(below: 3) {
        case 0: kept = Array(repeating: false, count: count)
        case 1: kept = Array(repeating: true, count: count)
        default: kept = (0..<count).map { _ in generator.next(below: 2) == 1 }  // Torn, any order.
        }
      }
      write.apply(to: &durable, sectors: kept)
    }
  }

  let offset: Int
  let bytes: [UInt8]
  /// Cut by the power while in progress: never visible, at most partly durable.
  let interrupted: Bool

  /// The write split at absolute 512-byte sector boundaries, as index ranges into `bytes`: the
  /// units a disk writes whole or not at all.
  var sectorRanges: [Range<Int>] {
    var ranges: [Range<Int>] = []
    var start = 0
    while start < bytes.count {
      let sectorEnd = ((offset + start) / Self.sectorSize + 1) * Self.sectorSize - offset
      let end = min(bytes.count, sectorEnd)
      ranges.append(start..<end)
      start = end
    }
    return ranges
  }

  /// Copies the write into `content`: all of it (`sectors == nil`) or the sectors marked true.
  func apply(to content: inout [UInt8], sectors kept: [Bool]?) {
    guard let kept else {
      content.replaceSubrange(offset..<offset + bytes.count, with: bytes)
      return
    }
    for (range, keep) in zip(sectorRanges, kept) where keep {
      content.replaceSubrange(offset + range.lowerBound..<offset + range.upperBound, with: bytes[range])
    }
  }
}
