import Foundation
import OTABoot
import OTALink
import OTAReceiverHost
import OTASender
import OTASimulation
import OTASocketLink
import OTAStorage
import OTASystem
// ota-bench: the receiver's ingest rate and CPU cost, over the in-memory link, into file slots.
//
//   swift run -c release ota-bench [--size MiB] [--mtu N ...] [--window KiB] [--dir PATH]
//                                  [--floor PATH] [--breakdown]
//
// For each MTU it pushes one image of --size MiB (default 64) from the real sender engine to the
// real receiver host over the in-memory link, recording every event the device is given; then it
// replays those events into a fresh host whose slots and journal are files under --dir (default: a
// new folder in /tmp), and measures the replay as a whole: wall time and process CPU time, two clock
// reads in all, no timer per call. With --floor (the program Scripts/bench-ingest.sh builds from
// Scripts/floor/ota-floor.c) it runs the floor for the same chunk size and prints device/floor.
// --delta OLD NEW pushes NEW to a device running OLD each way a central can (plain chunks, compressed,
// block copies from the device's block hashes, a delta against OLD) and prints bytes on air and time.
// --breakdown times each device event and each storage call instead, as before: the timers cost
// CPU of their own, so its figures are higher. --seal times the check of a slot against its seal.
import OTATrust
import OTAWire

struct Options {
  var sizeMiB = 64
  var mtus: [Int] = []
  var windowKiB = 64
  /// `--span KiB`: the device's receive span (its default, 16 windows, when not given); `--span`
  /// equal to `--window` acts as a device from before the span.
  var spanKiB: Int?
  var directory: String?
  var floor: String?
  var breakdown = false
  /// `--seal`: what checking a slot against its seal costs, at `--size` MiB.
  var seal = false
  /// `--delta OLD NEW`: bytes on air and time of each way to send NEW to a device running OLD.
  var delta: (old: String, new: String)?
  /// `--plan OLD NEW`: the central's planning alone, with `--matcher NAME`.
  var plan: (old: String, new: String)?
  var matcher = "rolling"
  /// `--ways full,delta`: the ways `--delta` pushes (all by default: full, compressed, blocks, pages, hand, delta).
  var ways: [String]?

  init(arguments: [String]) {
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--size": sizeMiB = iterator.next().flatMap(Int.init) ?? sizeMiB
      case "--mtu": if let mtu = iterator.next().flatMap(Int.init) { mtus.append(mtu) }
      case "--window": windowKiB = iterator.next().flatMap(Int.init) ?? windowKiB
      case "--span": spanKiB = iterator.next().flatMap(Int.init)
      case "--dir": directory = iterator.next()
      case "--floor": floor = iterator.next()
      case "--breakdown": breakdown = true
      case "--seal": seal = true
      case "--delta":
        guard let old = iterator.next(), let new = iterator.next() else {
          FileHandle.standardError.write(Data("ota-bench: --delta needs OLD and NEW\n".utf8))
          OtaBenchExitCode.usage.exit()
        }
        delta = (old, new)
      case "--plan":
        guard let old = iterator.next(), let new = iterator.next() else {
          FileHandle.standardError.write(Data("ota-bench: --plan needs OLD and NEW\n".utf8))
          OtaBenchExitCode.usage.exit()
        }
        plan = (old, new)
      case "--matcher": matcher = iterator.next() ?? matcher
      case "--ways": ways = iterator.next().map { $0.split(separator: ",").map(String.init) }
      case "--matchers":
        print(PlanBench.matchers.joined(separator: " "))
        OtaBenchExitCode.success.exit()
      case "-h", "--help":
        print(
          "usage: ota-bench [--size MiB] [--mtu N ...] [--window KiB] [--dir PATH] [--floor PATH] [--breakdown]\n"
            + "       ota-bench --delta OLD NEW [--mtu N ...] [--ways full,compressed,blocks,pages,hand,delta] [--span KiB]\n"
            + "       ota-bench --plan OLD NEW [--matcher rolling|suffix] [--mtu N]\n"
            + "       ota-bench --seal [--size MiB]"
        )
        OtaBenchExitCode.success.exit()
      default:
        FileHandle.standardError.write(Data("ota-bench: unknown argument \(argument) (try --help)\n".utf8))
        OtaBenchExitCode.usage.exit()
      }
    }
    if mtus.isEmpty { mtus = [517, 247] }
  }

  var base: String { directory ?? NSTemporaryDirectory() }
}

func seconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func format(_ value: Double, _ decimals: Int = 2) -> String { String(format: "%.\(decimals)f", value) }

/// A new folder under the benchmark's directory, removed by the caller.
func makeFolder(_ options: Options, _ name: String) throws -> String {
  let folder = (options.base as NSString).appendingPathComponent("ota-bench-\(getpid())-\(name)")
  try FileSystem.makeDirectories(folder)
  return folder
}

/// The device's storage on files in `folder`, each call timed into `timings` when given.
func makeStorage(folder: String, imageSize: Int, timings: StorageTimings?) throws -> DeviceStorage {
  let slots = FileSlotMedium(
    paths: SlotPair(a: folder + "/slot-a.img", b: folder + "/slot-b.img"), fileCapacity: UInt64(imageSize))
  let records = try FileRecordStore(directory: folder + "/state")
  guard let timings else { return DeviceStorage(slots: SlotAccess(medium: slots), records: records) }
  return DeviceStorage(
    slots: SlotAccess(medium: TimedSlotMedium(inner: slots, timings: timings)),
    records: TimedRecordStore(inner: records, timings: timings))
}

func makeHost(_ storage: DeviceStorage, _ options: Options) throws -> ReceiverHost {
  try ReceiverHost(
    storage: storage,
    control: BootControl(
      records: storage.records, backend: SimulatedBootloader(),
      factoryVersion: Version(major: 1, minor: 0, revision: 0)),
    windowCapacity: UInt32(options.windowKiB * 1024), imageCheck: .standard(ImagePolicy()))
}

func makeSimulation(image: [UInt8], mtu: Int, storage: DeviceStorage, options: Options) throws -> Simulation {
  try Simulation(
    image: image,
    sender: SenderConfiguration(version: Version(major: 2, minor: 0, revision: 0), activate: false),
    conditions: LinkConditions(mtu: mtu, packetsPerEvent: 64, queueDepth: 128), seed: 1
  ) { _ in try makeHost(storage, options) }
}

/// Bytes this process caused to be written to the disk so far (`write_bytes` of /proc/self/io).
func diskBytesWritten() -> Int? {
  guard let text = try? FileSystem.readText("/proc/self/io") else { return nil }
  for line in text.split(separator: "\n") where line.hasPrefix("write_bytes:") {
    return Int(line.dropFirst("write_bytes:".count).trimmingCharacters(in: .whitespaces))
  }
  return nil
}

/// The floor program's figures for `chunk`-byte chunks: CPU ms per MB and MB/s.
func runFloor(_ path: String, chunk: Int, options: Options) -> (cpu: Double, rate: Double)? {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = [
    "--dir", options.base, "--size", "\(options.sizeMiB)", "--chunk", "\(chunk)",
    "--window", "\(options.windowKiB / 2)",
  ]
  let pipe = Pipe()
  process.standardOutput = pipe
  guard (try? process.run()) != nil else { return nil }
  let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  var fields: [String: Double] = [:]
  for pair in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
    let parts = pair.split(separator: "=")
    if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
  }
  guard process.terminationStatus == 0, let cpu = fields["cpu_ms_per_mb"], let rate = fields["mb_per_s"]
  else {
    return nil
  }
  return (cpu, rate)
}

func header(_ mtu: Int, _ image: [UInt8], _ report: SenderReport, _ options: Options) -> String {
  "MTU \(mtu): \(image.count / (1 << 20)) MiB in \(report.chunksSent) chunks of "
    + "\(WriteSize.auto.valueLength(mtu: ATTMTU(clamping: mtu), dataLength: LinkConditions(mtu: mtu).dataLength) - DataChunk.headerSize) B, "
    + "\(report.windowsCommitted) windows of \(options.windowKiB / 2) KiB"
}

/// The default: one untimed transfer to learn the device's events, then their replay into a fresh
/// host on fresh files, measured as a whole.
func run(options: Options, mtu: Int, image: [UInt8]) throws {
  let recordingFolder = try makeFolder(options, "\(mtu)-recording")
  defer { try? FileSystem.removeTree(recordingFolder) }
  var simulation = try makeSimulation(
    image: image, mtu: mtu,
    storage: try makeStorage(folder: recordingFolder, imageSize: image.count, timings: nil),
    options: options)
  simulation.timesDevice = false
  simulation.recordsDeviceEvents = true
  let result = try simulation.run(limit: .seconds(1_000_000))
  guard case .succeeded(let report) = result.outcome else {
    print("MTU \(mtu): push failed: \(String(describing: result.outcome))")
    return
  }

  let replayFolder = try makeFolder(options, "\(mtu)-replay")
  defer { try? FileSystem.removeTree(replayFolder) }
  var host = try makeHost(
    try makeStorage(folder: replayFolder, imageSize: image.count, timings: nil), options)
  let events = result.deviceEvents
  let writtenBefore = diskBytesWritten()
  let replay = try IngestReplay.run(events, into: &host)
  let wall = seconds(replay.wall)
  let cpu = seconds(replay.cpu)
  let writtenAfter = diskBytesWritten()
  guard host.engine.statistics.windowsCommitted == report.windowsCommitted,
    case .validated = host.engine.phase
  else {
    print("MTU \(mtu): the replay did not end where the transfer did (\(host.engine.phase))")
    return
  }
  let megabytes = Double(image.count) / 1e6
  let cpuPerMB = cpu * 1000 / megabytes
  var lines = [
    header(mtu, image, report, options),
    "  device ingest  \(String(format: "%8.1f", megabytes / wall)) MB/s   (\(format(wall)) s replaying "
      + "\(events.count) events into the receiver host, validation included)",
    "  device CPU     \(String(format: "%8.2f", cpuPerMB)) ms per MB   (process CPU over the replay; CPU/wall "
      + "\(format(cpu / wall)))",
  ]
  if let before = writtenBefore, let after = writtenAfter {
    lines.append(
      "  disk writes    \(String(format: "%8.0f", Double(after - before) / megabytes)) bytes per MB of image")
  }
  if let path = options.floor {
    if let floor = runFloor(path, chunk: DataChunk.maxPayload(mtu: ATTMTU(clamping: mtu)), options: options) {
      lines.append(
        "  floor          \(String(format: "%8.2f", floor.cpu)) ms per MB, \(format(floor.rate, 1)) MB/s   "
          + "device/floor CPU \(format(cpuPerMB / floor.cpu))x, MB/s \(format(megabytes / wall / floor.rate))x"
      )
    } else {
      lines.append("  floor          \(path) did not run")
    }
  }
  print(lines.joined(separator: "\n"))
}

/// --breakdown: the transfer itself, each device event and storage call timed (the timers' own cost
/// included in the figures).
func runWithBreakdown(options: Options, mtu: Int, image: [UInt8]) throws {
  let folder = try makeFolder(options, "\(mtu)")
  defer { try? FileSystem.removeTree(folder) }
  let timings = StorageTimings()
  var simulation = try makeSimulation(
    image: image, mtu: mtu,
    storage: try makeStorage(folder: folder, imageSize: image.count, timings: timings),
    options: options)
  let clock = ContinuousClock()
  let started = clock.now
  let result = try simulation.run(limit: .seconds(1_000_000))
  let wall = clock.now - started
  guard case .succeeded(let report) = result.outcome else {
    print("MTU \(mtu): push failed: \(String(describing: result.outcome))")
    return
  }
  let megabytes = Double(image.count) / 1e6
  let device = seconds(result.deviceTime)
  let cpu = seconds(result.deviceCPUTime)
  let io = StorageTimings.Kind.allCases.map { "\($0.rawValue) \(format(seconds(timings.total($0))))s" }
  print(
    """
    \(header(mtu, image, report, options))
      device ingest  \(String(format: "%8.1f", megabytes / device)) MB/s   (\(format(device)) s \
    inside the receiver host, validation included, timers included)
      device CPU     \(String(format: "%8.2f", cpu * 1000 / megabytes)) ms per MB   \
    (CPU/wall \(format(cpu / device)), timers included)
      storage calls  \(io.joined(separator: ", "))
      whole run      \(String(format: "%8.2f", seconds(wall))) s wall (sender engine and link simulation included)
    """)
}

let options = Options(arguments: Array(CommandLine.arguments.dropFirst()))
if options.seal {
  do {
    try SealBench.run(options: options)
  } catch {
    print("ota-bench --seal: \(error)")
    OtaBenchExitCode.failed.exit()
  }
  OtaBenchExitCode.success.exit()
}
if let plan = options.plan {
  do {
    try PlanBench.run(old: plan.old, new: plan.new, matcher: options.matcher, options: options)
  } catch {
    print("ota-bench --plan: \(error)")
    OtaBenchExitCode.failed.exit()
  }
  OtaBenchExitCode.success.exit()
}
if let delta = options.delta {
  do {
    try DeltaBench.run(old: delta.old, new: delta.new, options: options)
  } catch {
    print("ota-bench --delta: \(error)")
    OtaBenchExitCode.failed.exit()
  }
  OtaBenchExitCode.success.exit()
}
/// The image: seeded bytes, made in a function (a top-level generator would be the main actor's,
/// checked on every byte).
func makeImage(size: Int) -> [UInt8] {
  var generator = SeededGenerator(seed: 64)
  return (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
}
let image = makeImage(size: options.sizeMiB << 20)
print(
  "ota-bench: receiver ingest over the in-memory link, slots on files"
    + (options.breakdown ? ", each call timed" : ", the device's events replayed and measured as a whole"))
for mtu in options.mtus {
  do {
    if options.breakdown {
      try runWithBreakdown(options: options, mtu: mtu, image: image)
    } else {
      try run(options: options, mtu: mtu, image: image)
    }
  } catch {
    print("MTU \(mtu): \(error)")
  }
}
