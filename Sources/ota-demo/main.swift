// ota-demo: one A/B update told step by step, over a simulated BLE link, with no radio.
//
//   swift run ota-demo [IMAGE]      (default: Images/mcuboot-ed25519-100KiB.bin)
//
// The real sender and receiver engines talk over an in-memory link with 2% loss, reordering and
// one forced disconnect; the device keeps its two slots and its journal in files in a temporary
// folder. The push resumes after the drop, the device validates the image, activates it, restarts
// into the other slot, and the central verifies the version that runs.
import Foundation
import OTADevice
import OTAEngine
import OTALink
import OTASimulation
import OTAStorage
import OTAWire

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("ota-demo: \(message)\n".utf8))
  exit(1)
}

func seconds(_ duration: Duration) -> String {
  let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  return String(format: "%7.3fs", value)
}

func drawSlots(_ host: ReceiverHost, title: String) {
  print(title)
  for slot in SlotID.allCases {
    let marker = host.boot.running == slot ? "▶ running" : "         "
    let content = host.boot.version(of: slot).map { "firmware \($0)" } ?? "empty"
    let state: String
    if host.boot.running == slot {
      state = host.boot.runningOnTrial ? "(on trial)" : "(confirmed)"
    } else {
      state = ""
    }
    print("  slot \(slot)  \(marker)  \(content) \(state)")
  }
}

let arguments = CommandLine.arguments.dropFirst()
let imagePath = arguments.first ?? "Images/mcuboot-ed25519-100KiB.bin"
guard let data = FileManager.default.contents(atPath: imagePath) else { fail("cannot read \(imagePath)") }
let image = [UInt8](data)
let version: Version
if let layout = try? MCUbootImageLayout(parsing: image) {
  version = layout.header.version
} else {
  version = Version(major: 1, minor: 1, revision: 0)
}

let folder = NSTemporaryDirectory() + "ota-demo-\(getpid())"
try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let capacity = UInt64(max(256 * 1024, image.count))
let slots = FileSlotMedium(
  slotA: folder + "/slot-a.img", slotB: folder + "/slot-b.img", fileCapacity: capacity)
let storage: DeviceStorage
do {
  storage = DeviceStorage(
    slots: SlotPair(medium: slots), records: try FileRecordStore(directory: folder + "/state"))
} catch {
  fail("cannot set up the device's storage in \(folder): \(error)")
}
let factory = Version(major: 1, minor: 0, revision: 0)
func makeHost() throws -> ReceiverHost {
  try ReceiverHost(
    storage: storage, windowCapacity: 16 * 1024, factoryVersion: factory, imageCheck: StandardImageCheck.check
  )
}

print("BlueOTA demo: an A/B firmware update over a simulated BLE link (no Bluetooth needed)\n")
do {
  drawSlots(try makeHost(), title: "The device before:")
  let conditions = LinkConditions(
    mtu: 247, loss: 0.02, reordering: 0.05, disconnectAfterBytes: image.count * 2 / 5)
  print(
    """

    The image: \(imagePath), \(image.count) bytes, version \(version)
    The link:  ATT MTU \(conditions.mtu), \(conditions.connectionInterval) connection interval, \
    \(conditions.packetsPerEvent) packets per event, 2% of data packets lost, 5% reordered,
               and one forced disconnect after \(conditions.disconnectAfterBytes!) bytes

    """)
  var simulation = try Simulation(
    image: image, sender: SenderConfiguration(version: version), conditions: conditions, seed: 2026
  ) { _ in try makeHost() }
  let result = try simulation.run()
  for (at, what) in result.timeline { print("  [\(seconds(at))] \(what)") }
  print("")
  switch result.outcome {
  case .succeeded(let report):
    let resumes = report.resumedFrom.filter { $0 > 0 }.map { "resumed from byte \($0)" }
    print(
      """
      The five phases: PREPARE, TRANSFER (\(report.chunksSent) chunks, \(report.windowsCommitted) windows \
      committed, \(report.windowFailures) window(s) resent), VALIDATE, ACTIVATE, VERIFY.
      \(resumes.isEmpty ? "" : "After the drop the push \(resumes.joined(separator: ", ")), not from zero.\n")\
      The device runs version \(report.deviceAfter?.runningVersion.description ?? "?"): the update is verified.
      """)
  case .failed(let failure, _):
    print("The push failed: \(failure)")
  case nil:
    print("The push did not finish.")
  }
  print("")
  if let device = simulation.device { drawSlots(device, title: "The device after:") }
} catch {
  fail("\(error)")
}
