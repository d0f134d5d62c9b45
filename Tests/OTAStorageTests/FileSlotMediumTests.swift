import Foundation
import Glibc
import OTASystem
import OTATestSupport
import OTAWire
import Testing

@testable import OTAStorage

@Suite("FileSlotMedium")
struct FileSlotMediumTests {
  let capacity: UInt64 = 10_000

  func medium(in directory: String) -> FileSlotMedium {
    FileSlotMedium(paths: SlotPair(a: directory + "/a.img", b: directory + "/b.img"), fileCapacity: capacity)
  }

  @Test func writesAndReadsBackAtOddOffsets() throws {
    try withTemporaryDirectory { directory in
      let medium = medium(in: directory)
      let writer = try medium.openForWriting(.b)
      #expect(writer.capacity == capacity)
      let pieces: [(offset: UInt64, bytes: [UInt8])] = [
        (1, pattern(3, seed: 1)), (509, pattern(1_030, seed: 2)), (capacity - 1, [0xEE]),
      ]
      for piece in pieces {
        try write(piece.bytes, at: piece.offset, to: writer)
      }
      try writer.sync()
      for piece in pieces {
        #expect(try writer.read(at: piece.offset, count: piece.bytes.count) == piece.bytes)
      }
      // A fresh reader sees the same bytes, and zeros where nothing was written.
      let reader = try medium.openForReading(.b)
      #expect(try reader.read(at: 0, count: 5) == [0] + pattern(3, seed: 1) + [0])
      #expect(try reader.read(at: 509, count: 1_030) == pattern(1_030, seed: 2))
      #expect(try reader.read(at: 2_000, count: 100) == [UInt8](repeating: 0, count: 100))
      #expect(try reader.read(at: capacity - 1, count: 1) == [0xEE])
      // Slot A is untouched.
      #expect(try medium.openForReading(.a).read(at: 0, count: 16) == [UInt8](repeating: 0, count: 16))
    }
  }

  @Test func readsPastTheEndOfAShortFileAreZeros() throws {
    try withTemporaryDirectory { directory in
      let medium = medium(in: directory)
      let writer = try medium.openForWriting(.a)
      try write([1, 2, 3], at: 100, to: writer)
      #expect(try fileSize(directory + "/a.img") == 103)
      #expect(try writer.read(at: 101, count: 10) == [2, 3, 0, 0, 0, 0, 0, 0, 0, 0])
      #expect(try writer.read(at: capacity - 50, count: 50) == [UInt8](repeating: 0, count: 50))
    }
  }

  /// A zstd frame's decoder reads the running slot through `withBytes`: mapped where the file holds
  /// the bytes (at any offset, not only a page's start), read with zeros past a short file's end
  /// (a mapping there would fault), and refused past the capacity.
  @Test func withBytesMapsWhatTheFileHoldsAndReadsTheRest() throws {
    // [P-ZSTD-8]
    try withTemporaryDirectory { directory in
      let medium = medium(in: directory)
      let writer = try medium.openForWriting(.a)
      let bytes = pattern(9_000, seed: 7)
      try write(bytes, at: 0, to: writer)
      let reader = try medium.openForReading(.a)
      #expect(try reader.withBytes(at: 0, count: 9_000) { Array($0) } == bytes)
      #expect(try reader.withBytes(at: 4_097, count: 100) { Array($0) } == Array(bytes[4_097..<4_197]))
      #expect(
        try reader.withBytes(at: 8_990, count: 20) { Array($0) } == Array(bytes[8_990...])
          + [UInt8](repeating: 0, count: 10))
      #expect(try reader.withBytes(at: 0, count: 0) { $0.count } == 0)
      #expect(throws: StorageError.self) { try reader.withBytes(at: capacity - 5, count: 10) { $0.count } }
    }
  }

  @Test func prepareSizesARegularFileToItsCapacityAndRefusesTooLargeImages() throws {
    // [P-TIME-4]
    try withTemporaryDirectory { directory in
      let medium = medium(in: directory)
      let writer = try medium.openForWriting(.a)
      try write([9, 9], at: 0, to: writer)
      #expect(throws: StorageError.tooLarge(size: capacity + 1, capacity: capacity)) {
        try writer.prepare(forImageOf: capacity + 1)
      }
      #expect(try fileSize(directory + "/a.img") == 2)
      try writer.prepare(forImageOf: capacity)
      #expect(try fileSize(directory + "/a.img") == capacity)
      #expect(try writer.read(at: 0, count: 3) == [9, 9, 0])
    }
  }

  @Test func refusesReadsAndWritesOutsideTheSlot() throws {
    try withTemporaryDirectory { directory in
      let writer = try medium(in: directory).openForWriting(.a)
      #expect(throws: StorageError.outOfBounds(offset: capacity - 1, count: 2, capacity: capacity)) {
        try write([1, 2], at: capacity - 1, to: writer)
      }
      #expect(throws: StorageError.outOfBounds(offset: capacity, count: 1, capacity: capacity)) {
        try writer.read(at: capacity, count: 1)
      }
      #expect(throws: StorageError.outOfBounds(offset: .max, count: 2, capacity: capacity)) {
        try writer.read(at: .max, count: 2)
      }
      #expect(throws: StorageError.outOfBounds(offset: 0, count: -1, capacity: capacity)) {
        try writer.read(at: 0, count: -1)
      }
      #expect(try writer.read(at: capacity, count: 0) == [])
      // Nothing was written by the refused write.
      #expect(try fileSize(directory + "/a.img") == 0)
    }
  }

  @Test func refusesOffsetsTheKernelCannotTakeInsteadOfTrapping() throws {
    try withTemporaryDirectory { directory in
      let medium = FileSlotMedium(
        paths: SlotPair(a: directory + "/a.img", b: directory + "/b.img"), fileCapacity: .max)
      let writer = try medium.openForWriting(.a)
      let huge = UInt64(Int64.max) + 1
      let path = directory + "/a.img"
      #expect(throws: StorageError.system(operation: "pread", path: path, errno: .invalidArgument)) {
        try writer.read(at: huge, count: 1)
      }
      #expect(throws: StorageError.system(operation: "pwrite", path: path, errno: .invalidArgument)) {
        try write([1], at: UInt64(Int64.max), to: writer)
      }
      #expect(throws: StorageError.system(operation: "ftruncate", path: path, errno: .invalidArgument)) {
        try writer.prepare(forImageOf: 1)
      }
    }
  }

  @Test func slotPairRefusesToWriteTheRunningSlot() throws {
    try withTemporaryDirectory { directory in
      let pair = SlotAccess(medium: medium(in: directory))
      #expect(throws: StorageError.runningSlotIsReadOnly("slot A is running")) {
        try pair.openForWriting(.a, running: .a)
      }
      #expect(throws: StorageError.runningSlotIsReadOnly("slot B is running")) {
        try pair.openForWriting(.b, running: .b)
      }
      let writer = try pair.openForWriting(.b, running: .a)
      try write([7], at: 0, to: writer)
      #expect(try pair.reader(.b).read(at: 0, count: 1) == [7])
    }
  }

  @Test func aReaderIsOpenedReadOnlyAndAWriterReadWrite() throws {
    try withTemporaryDirectory { directory in
      let medium = medium(in: directory)
      let reader = try #require(try medium.openForReading(.a) as? FileSlotReader)
      let readerFlags = try openFlags(ofDescriptor: reader.fileDescriptor)
      #expect(readerFlags & O_ACCMODE == O_RDONLY)
      #expect(readerFlags & O_CLOEXEC != 0)
      // The kernel itself refuses a write through the reader's descriptor.
      var byte: UInt8 = 1
      let result = Glibc.pwrite(reader.fileDescriptor, &byte, 1, 0)
      let code = errno
      #expect(result == -1)
      #expect(code == EBADF)

      let writer = try #require(try medium.openForWriting(.a) as? FileSlotWriter)
      let writerFlags = try openFlags(ofDescriptor: writer.fileDescriptor)
      #expect(writerFlags & O_ACCMODE == O_RDWR)
      #expect(writerFlags & O_CLOEXEC != 0)
    }
  }

  @Test func releasingAReaderClosesItsDescriptor() throws {
    try withTemporaryDirectory { directory in
      let path = directory + "/a.img"
      var reader: FileSlotReader? = try #require(
        try medium(in: directory).openForReading(.a) as? FileSlotReader)
      let fd = try #require(reader?.fileDescriptor)
      #expect(pathOfDescriptor(fd) == path)
      reader = nil
      // Closed: the number is free or (tests run in parallel) reused for some other file.
      #expect(pathOfDescriptor(fd) != path)
    }
  }

  @Test func aMissingSlotFileIsCreatedEmptyAndReadsAsZeros() throws {
    try withTemporaryDirectory { directory in
      let reader = try medium(in: directory).openForReading(.b)
      #expect(FileManager.default.fileExists(atPath: directory + "/b.img"))
      #expect(reader.capacity == capacity)
      #expect(try reader.read(at: 4_000, count: 8) == [UInt8](repeating: 0, count: 8))
    }
  }

  @Test func refusesDirectoriesCharacterDevicesAndMissingDirectories() throws {
    try withTemporaryDirectory { directory in
      let folder = directory + "/folder"
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
      let cases = [
        folder: "is a directory, not a block device or regular file",
        "/dev/null": "is a character device, not a block device or regular file",
        directory + "/missing/b.img": "does not exist and its directory does not exist either",
      ]
      for (path, reason) in cases {
        let medium = FileSlotMedium(paths: SlotPair(a: path, b: path), fileCapacity: capacity)
        #expect(throws: StorageError.unusableSlot(path: path, reason: reason)) {
          try medium.openForWriting(.a)
        }
        #expect(throws: StorageError.unusableSlot(path: path, reason: reason)) {
          try medium.openForReading(.b)
        }
      }
    }
  }

  @Test(.enabled(if: LoopDevice.isAvailable, "needs root and a working losetup"))
  func aBlockDeviceHasItsOwnSizeAsCapacity() throws {
    try withTemporaryDirectory { directory in
      let backing = directory + "/disk.img"
      let size = 1 << 20
      #expect(FileManager.default.createFile(atPath: backing, contents: Data(count: size)))
      try LoopDevice.with(backing: backing) { device in
        let medium = FileSlotMedium(paths: SlotPair(a: device, b: directory + "/b.img"), fileCapacity: 4_096)
        let writer = try medium.openForWriting(.a)
        #expect(writer.capacity == UInt64(size))
        #expect(throws: StorageError.tooLarge(size: UInt64(size) + 1, capacity: UInt64(size))) {
          try writer.prepare(forImageOf: UInt64(size) + 1)
        }
        try writer.prepare(forImageOf: UInt64(size))
        let bytes = pattern(777, seed: 42)
        try write(bytes, at: 4_097, to: writer)
        try writer.sync()
        #expect(try medium.openForReading(.a).read(at: 4_097, count: 777) == bytes)
        #expect(throws: StorageError.outOfBounds(offset: UInt64(size), count: 1, capacity: UInt64(size))) {
          try writer.read(at: UInt64(size), count: 1)
        }
      }
      // The bytes reached the backing file, which prepare did not resize.
      let stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: backing)))
      #expect(stored.count == size)
      #expect(Array(stored[4_097..<4_097 + 777]) == pattern(777, seed: 42))
    }
  }
}
