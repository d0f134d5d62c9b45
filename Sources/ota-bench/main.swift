import Foundation
import OTADevice
import OTAEngine
import OTALink
import OTASimulation
import OTASocketLink
import OTAStorage
// ota-bench: the receiver's ingest rate and CPU cost, over the in-memory link, into file slots.
//
//   swift run -c release ota-bench [--size MiB] [--mtu N ...] [--window KiB] [--dir PATH]
//
// For each MTU it pushes one image of --size MiB (default 64) from the real sender engine to the
// real receiver host, whose slots and journal are files under --dir (default: a new folder in
// /tmp), and prints the time spent inside the device and where it went. The link is in virtual
// time, so the figures are the device's own cost, not air time.
import OTATrust
import OTAWire

struct Options {
  var sizeMiB = 64
  var mtus: [Int] = []
  var windowKiB = 64
  var directory: String?

  init(arguments: [String]) {
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--size": sizeMiB = iterator.next().flatMap(Int.init) ?? sizeMiB
      case "--mtu": if let mtu = iterator.next().flatMap(Int.init) { mtus.append(mtu) }
      case "--window": windowKiB = iterator.next().flatMap(Int.init) ?? windowKiB
      case "--dir": directory = iterator.next()
      case "-h", "--help":
        print("usage: ota-bench [--size MiB] [--mtu N ...] [--window KiB] [--dir PATH]")
        exit(0)
      default:
        FileHandle.standardError.write(Data("ota-bench: unknown argument \(argument) (try --help)\n".utf8))
        exit(2)
      }
    }
    if mtus.isEmpty { mtus = [517, 247] }
  }
}

func seconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func run(options: Options, mtu: Int, image: [UInt8]) throws {
  let base = options.directory ?? NSTemporaryDirectory()
  let folder = (base as NSString).appendingPathComponent("ota-bench-\(getpid())-\(mtu)")
  try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: folder) }

  let timings = StorageTimings()
  let slots = FileSlotMedium(
    paths: SlotPair(a: folder + "/slot-a.img", b: folder + "/slot-b.img"), fileCapacity: UInt64(image.count))
  let records = try FileRecordStore(directory: folder + "/state")
  let storage = DeviceStorage(
    slots: SlotAccess(medium: TimedSlotMedium(inner: slots, timings: timings)),
    records: TimedRecordStore(inner: records, timings: timings))
  let conditions = LinkConditions(mtu: mtu, packetsPerEvent: 64, queueDepth: 128)
  var simulation = try Simulation(
    image: image,
    sender: SenderConfiguration(version: Version(major: 2, minor: 0, revision: 0), activate: false),
    conditions: conditions, seed: 1
  ) { _ in
    try ReceiverHost(
      storage: storage,
      control: BootControl(
        records: storage.records, backend: SimulatedBootloader(),
        factoryVersion: Version(major: 1, minor: 0, revision: 0)),
      windowCapacity: UInt32(options.windowKiB * 1024), imageCheck: .standard(ImagePolicy()))
  }
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
  let io = StorageTimings.Kind.allCases.map {
    "\($0.rawValue) \(String(format: "%.2f", seconds(timings.total($0))))s"
  }
  print(
    """
    MTU \(mtu): \(image.count / (1 << 20)) MiB in \(report.chunksSent) chunks of \
    \(WriteSize.auto.valueLength(mtu: mtu, dataLength: conditions.dataLength) - DataChunk.headerSize) B, \(report.windowsCommitted) windows of \(options.windowKiB / 2) KiB
      device ingest  \(String(format: "%8.1f", megabytes / device)) MB/s   (\(String(format: "%.2f", device)) s \
    inside the receiver host, validation included)
      device CPU     \(String(format: "%8.2f", cpu * 1000 / megabytes)) ms per MB   \
    (CPU/wall \(String(format: "%.2f", cpu / device)))
      storage calls  \(io.joined(separator: ", "))
      whole run      \(String(format: "%8.2f", seconds(wall))) s wall (sender engine and link simulation included)
    """)
}

let options = Options(arguments: Array(CommandLine.arguments.dropFirst()))
var generator = SeededGenerator(seed: 64)
let image = (0..<(options.sizeMiB << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
print("ota-bench: receiver ingest over the in-memory link, slots on files")
for mtu in options.mtus {
  do {
    try run(options: options, mtu: mtu, image: image)
  } catch {
    print("MTU \(mtu): \(error)")
  }
}
