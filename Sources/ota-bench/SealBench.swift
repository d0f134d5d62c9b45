import Foundation
import OTABoot
import OTAChecksum
import OTASimulation
import OTAStorage
import OTASystem
import OTATrust
import OTAWire

/// `--seal`: what the seal costs (docs/BENCHMARKS.md, "The seal"). A slot file of `--size` MiB holds
/// an image armed for a trial; the boot stage's check (`BootControl.checkSeal`: the slot read again
/// and hashed) is timed, and so is ACTIVATE's image check with and without the seal folded into its
/// one pass. The floor is the hash alone over the same bytes in memory (no reads), and the disk's
/// part is what `cat` takes to read the file. Figures are with the file in the page cache (it was
/// just written), the best of three.
enum SealBench {
  static func run(options: Options) throws {
    let size = options.sizeMiB << 20
    let folder = try makeFolder(options, "seal")
    defer { try? FileSystem.removeTree(folder) }
    let storage = try makeStorage(folder: folder, imageSize: size, timings: nil)
    let image = makeImage(size: size)
    try image.withUnsafeBytes { bytes in
      let writer = try storage.slots.openForWriting(.b, running: .a)
      try writer.write(bytes, at: 0)
      try writer.sync()
    }
    let control = BootControl(
      records: storage.records, backend: SimulatedBootloader(),
      factoryVersion: Version(major: 1, minor: 0, revision: 0), slots: storage.slots)
    let memory = MemorySource(bytes: image)
    let seal = try SourceDigest.sha256(of: memory, length: UInt64(size))
    var state = BootState.factory(version: Version(major: 1, minor: 0, revision: 0))
    state.activate(
      .b, version: Version(major: 2, minor: 0, revision: 0), size: UInt32(size), crc32: CRC32.checksum(image),
      seal: seal, attempts: 3, permanent: false)
    let crc = CRC32.checksum(image)

    let check = best { _ = control.checkSeal(.b, in: state) }
    guard control.checkSeal(.b, in: state) == .intact else { throw SealBenchError("the seal did not hold") }
    let hashOnly = best { _ = try? SourceDigest.sha256(of: memory, length: UInt64(size)) }
    let verify = { (sealing: Bool) in
      best {
        _ = try? ImageVerifier.verify(
          reader: try storage.slots.reader(.b), size: UInt64(size), expectedCRC: crc,
          preparedVersion: Version(major: 2, minor: 0, revision: 0), sealing: sealing)
      }
    }
    let plain = verify(false)
    let sealed = verify(true)
    let cat = best {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/cat")
      process.arguments = [folder + "/slot-b.img"]
      process.standardOutput = FileHandle.nullDevice
      try? process.run()
      process.waitUntilExit()
    }
    let cold = dropCaches() ? best(runs: 1) { _ = control.checkSeal(.b, in: state) } : nil
    let megabytes = Double(size) / 1e6
    print(
      """
      ota-bench --seal: a \(options.sizeMiB) MiB image in a slot file (page cache warm), best of 3
        boot stage's seal check   \(format(check, 3)) s   \(format(megabytes / check, 0)) MB/s   (read the slot again, SHA-256)
        floor: SHA-256 in memory  \(format(hashOnly, 3)) s   \(format(megabytes / hashOnly, 0)) MB/s   (no reads)
        floor: cat the slot file  \(format(cat, 3)) s   (reads alone, a process of its own)
        ACTIVATE's image check    \(format(plain, 3)) s without the seal, \(format(sealed, 3)) s with it folded in (+\(format(sealed - plain, 3)) s)
      """)
    if let cold {
      print("  boot stage's seal check, page cache dropped first (root): \(format(cold, 3)) s, once")
    }
  }

  /// Drops the page cache (root only): the next read comes from the disk. False when not allowed.
  static func dropCaches() -> Bool {
    sync()
    return (try? "3\n".write(toFile: "/proc/sys/vm/drop_caches", atomically: false, encoding: .utf8)) != nil
  }

  /// The best wall time of `runs` runs of `body`, in seconds.
  static func best(runs: Int = 3, _ body: () throws -> Void) rethrows -> Double {
    var times: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<runs {
      let started = clock.now
      try body()
      times.append(seconds(clock.now - started))
    }
    return times.min() ?? 0
  }
}

/// The image in memory, as the check's floor reads it.
struct MemorySource: ImageSource {
  let bytes: [UInt8]
  var capacity: UInt64 { UInt64(bytes.count) }
  func read(at offset: UInt64, count: Int) throws(Never) -> [UInt8] {
    Array(bytes[Int(offset)..<Int(offset) + count])
  }
}

struct SealBenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
