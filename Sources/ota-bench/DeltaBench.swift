import Foundation
import OTABoot
import OTAChecksum
import OTADeltaPlan
import OTALink
import OTAReceiverHost
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTASystem
import OTATrust
import OTAWire

/// `ota-bench --delta OLD NEW`: NEW pushed to a device whose slot A runs OLD (its size and CRC32 in
/// the boot state, as after an earlier update), over the in-memory link with the simulated link's
/// air-time model, once per way of sending it. Figures: data bytes on air, the transfer's simulated
/// time (PREPARE to VALIDATE's answer), the whole push's, this process's wall time, and the
/// device's CPU per MB of image (its events replayed alone into a fresh device, as `ota-bench` does).
enum DeltaBench {
  enum Way: String, CaseIterable {
    case full = "plain chunks (--full)"
    case compressed = "compressed (no base, no hashes)"
    case blockHashes = "block copies (63 hashes, one value)"
    case pagedBlockHashes = "block copies (BLOCK HASHES pages)"
    case handWritten = "block copies (a slot nobody adopted)"
    case delta = "delta (--base OLD)"

    /// What `--ways` calls it.
    var name: String {
      switch self {
      case .full: "full"
      case .compressed: "compressed"
      case .blockHashes: "blocks"
      case .pagedBlockHashes: "pages"
      case .handWritten: "hand"
      case .delta: "delta"
      }
    }
  }

  static func run(old oldPath: String, new newPath: String, options: Options) throws {
    guard let old = try? FileSystem.readFile(oldPath), let new = try? FileSystem.readFile(newPath)
    else { throw BenchError("cannot read \(oldPath) or \(newPath)") }
    let gzip = RawDeflate.compress(new, level: 9).count + 18  // gzip's header and trailer
    print("ota-bench --delta: \(newPath) (\(new.count) B) to a device running \(oldPath) (\(old.count) B)")
    print("  for reference: gzip -9 of the new image \(gzip) B")
    for mtu in options.mtus {
      print("MTU \(mtu):")
      print(
        "  " + "way".padding(toLength: 40, withPad: " ", startingAt: 0)
          + "   on air      share   transfer    push   wall   device CPU")
      for way in Way.allCases where options.ways.map({ $0.contains(way.name) }) ?? true {
        let figures = try push(new, to: old, way: way, mtu: mtu, options: options)
        print(
          "  " + way.rawValue.padding(toLength: 40, withPad: " ", startingAt: 0)
            + String(
              format: " %8d B %8.1f%% %8.2f s %6.2f s %5.2f s %7.1f ms/MB  %@", figures.bytesOnAir,
              100 * Double(figures.bytesOnAir) / Double(new.count), figures.transfer, figures.push,
              figures.wall, figures.deviceCPU, figures.mode))
      }
    }
  }

  struct Figures {
    var bytesOnAir: Int
    var transfer: Double
    var push: Double
    var wall: Double
    /// The device's CPU per MB of image, its events replayed alone.
    var deviceCPU: Double
    var mode: String
  }

  /// A device on files in a new folder whose slot A runs `old`, known to its boot state unless
  /// `adopted` is false (a slot written by hand: Info's running image size is 0).
  static func device(
    running old: [UInt8], capacity: Int, _ name: String, adopted: Bool = true, options: Options
  ) throws
    -> (folder: String, storage: DeviceStorage, control: BootControl)
  {
    let folder = try makeFolder(options, name)
    let storage = try makeStorage(folder: folder, imageSize: capacity, timings: nil)
    var filled = old
    filled += [UInt8](repeating: 0, count: capacity - old.count)
    try filled.withUnsafeBytes { bytes in
      try storage.slots.openForWriting(.a, running: .b).write(bytes, at: 0)
    }
    let control = BootControl(
      records: storage.records, backend: SimulatedBootloader(),
      factoryVersion: Version(major: 1, minor: 0, revision: 0))
    let size = UInt32(old.count)
    let crc = CRC32.checksum(old)
    guard adopted else { return (folder, storage, control) }
    _ = try control.update { state in
      state.slots[.a].size = size
      state.slots[.a].crc32 = crc
    }
    return (folder, storage, control)
  }

  static func push(_ new: [UInt8], to old: [UInt8], way: Way, mtu: Int, options: Options) throws -> Figures {
    let capacity = max(new.count, old.count)
    let (folder, storage, control) = try device(
      running: old, capacity: capacity, "delta-\(mtu)", adopted: way != .handWritten, options: options)
    defer { try? FileSystem.removeTree(folder) }
    let configuration = SenderConfiguration(
      version: Version(major: 2, minor: 0, revision: 0), activate: false, operations: way != .full)
    var digest: BlockDigester?
    if way == .blockHashes || way == .pagedBlockHashes || way == .handWritten {
      digest = { bytes in BlockDigest.truncatedSHA256(bytes) }
    }
    // The one-value list is what a device from before BLOCK HASHES (features bit 2) offers.
    let features: Features = way == .blockHashes ? [.missingRanges, .operations] : .all
    let bases = way == .delta ? [BaseImage(bytes: old, name: "old")] : []
    let window = UInt32(options.windowKiB * 1024)
    let span = options.spanKiB.map { UInt32($0 * 1024) }
    let factory: Simulation.HostFactory = { _ in
      try ReceiverHost(
        storage: storage, control: control, windowCapacity: window, imageCheck: .standard(ImagePolicy()),
        features: features, receiveSpan: span)
    }
    let started = ContinuousClock.now
    var simulation = try Simulation(
      image: new, sender: configuration, conditions: LinkConditions(mtu: mtu), seed: 1, bases: bases,
      blockDigest: digest, makeHost: factory)
    simulation.recordsDeviceEvents = true
    let limit = Duration.seconds(100_000)
    let result = try simulation.run(limit: limit)
    let wall = seconds(ContinuousClock.now - started)
    guard case .succeeded(let report) = result.outcome else {
      throw BenchError("\(way.rawValue) at MTU \(mtu): \(String(describing: result.outcome))")
    }
    let written = try storage.slots.reader(.b).read(at: 0, count: new.count)
    guard written == new else { throw BenchError("\(way.rawValue): slot B does not hold the new image") }
    // The device alone: its events replayed into a fresh device running `old`, its CPU measured.
    let replayDevice = try device(running: old, capacity: capacity, "delta-\(mtu)-replay", options: options)
    defer { try? FileSystem.removeTree(replayDevice.folder) }
    var host = try ReceiverHost(
      storage: replayDevice.storage, control: replayDevice.control, windowCapacity: window,
      imageCheck: .standard(ImagePolicy()))
    let replay = try IngestReplay.run(result.deviceEvents, into: &host)
    let transfer = report.transferStartedAt.flatMap { start in report.validatedAt.map { seconds($0 - start) }
    }
    return Figures(
      bytesOnAir: Int(report.bytesOnAir), transfer: transfer ?? 0, push: seconds(result.elapsed), wall: wall,
      deviceCPU: seconds(replay.cpu) * 1000 / (Double(new.count) / 1e6),
      mode: describe(report) + ", \(report.chunksSent) writes, \(report.windowsCommitted) windows")
  }

  /// How the bytes went, and for block copies the hashes they were planned with.
  static func describe(_ report: SenderReport) -> String {
    guard report.blockHashesRead > 0 else { return "\(report.transferMode)" }
    let requests = report.blockHashRequests > 0 ? " in \(report.blockHashRequests) pages" : ""
    return
      "\(report.transferMode) (\(report.blockHashesRead) hashes of \(report.blockSize) B blocks\(requests))"
  }
}

struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
