import Foundation
import OTAStorage
import OTATestSupport

/// The `flags:` line of `/proc/self/fdinfo/<fd>` (octal), the open file's status and access flags.
func openFlags(ofDescriptor fd: Int32) throws -> Int32 {
  let info = try String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8)
  for line in info.split(separator: "\n") where line.hasPrefix("flags:") {
    let digits = line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces)
    if let flags = Int32(digits, radix: 8) { return flags }
  }
  throw CocoaError(.fileReadCorruptFile)
}

/// What `/proc/self/fd/<fd>` points at now, or nil if the descriptor is closed.
func pathOfDescriptor(_ fd: Int32) -> String? {
  try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
}

/// The size of the file at `path`.
func fileSize(_ path: String) throws -> UInt64 {
  let attributes = try FileManager.default.attributesOfItem(atPath: path)
  return (attributes[.size] as? NSNumber)?.uint64Value ?? 0
}

/// Writes `bytes` at `offset` through any writer. (Taking `[UInt8]` keeps a literal like `[1, 2]`
/// from becoming an `[Int]` of 16 bytes, as it would with `withUnsafeBytes` on the literal.)
func write(_ bytes: [UInt8], at offset: UInt64, to writer: any SlotWriter) throws(StorageError) {
  let failure = bytes.withUnsafeBytes { buffer -> StorageError? in
    do throws(StorageError) {
      try writer.write(buffer, at: offset)
      return nil
    } catch {
      return error
    }
  }
  if let failure { throw failure }
}

/// Distinct, recognisable bytes: `count` bytes starting at `seed`, wrapping.
func pattern(_ count: Int, seed: UInt8) -> [UInt8] {
  (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0 &* 7) }
}

/// Runs a command, returning its standard output (trimmed) when it exits with 0.
func run(_ executable: String, _ arguments: [String]) -> String? {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  let output = Pipe()
  process.standardOutput = output
  process.standardError = FileHandle.nullDevice
  do { try process.run() } catch { return nil }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else { return nil }
  return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A loop device over a temporary file, for testing the block-device path of `FileSlotMedium`.
enum LoopDevice {
  static let losetup = "/usr/sbin/losetup"

  /// True when loop devices can be attached here (root, `/dev/loop-control`, a working losetup).
  static let isAvailable: Bool = {
    guard FileManager.default.fileExists(atPath: "/dev/loop-control"),
      FileManager.default.isExecutableFile(atPath: losetup)
    else { return false }
    return
      (try? withTemporaryDirectory { directory in
        let backing = directory + "/probe.img"
        guard FileManager.default.createFile(atPath: backing, contents: Data(count: 4096)),
          let device = run(losetup, ["--find", "--show", backing])
        else { return false }
        _ = run(losetup, ["--detach", device])
        return true
      }) ?? false
  }()

  /// Attaches `backing`, runs `body` with the device path and detaches it again.
  static func with<R>(backing: String, _ body: (String) throws -> R) throws -> R {
    guard let device = run(losetup, ["--find", "--show", backing]) else {
      throw CocoaError(.fileNoSuchFile)
    }
    defer { _ = run(losetup, ["--detach", device]) }
    return try body(device)
  }
}
