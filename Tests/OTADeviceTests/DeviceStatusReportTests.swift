import Foundation
import OTABoot
import OTADaemon
import OTAJournal
import OTAReport
import OTAStorage
import OTATestSupport
import OTATrust
import OTAWire
import Testing

@Suite struct DeviceStatusReportTests {
  static let v1 = Version(major: 1, minor: 0, revision: 0)
  static let v2 = Version(major: 2, minor: 0, revision: 1, build: 7)
  static let layout = DeviceLayout(
    slots: SlotPair(a: "/var/lib/otad/slot-a.img", b: "/var/lib/otad/slot-b.img"), slotCapacity: 16 << 20,
    stateDirectory: "/var/lib/otad")

  /// Slot B on trial (its first boot begun), a transfer in the journal, one trusted key.
  static func trialReport() -> DeviceStatusReport {
    var state = BootState.factory(version: v1)
    state.activate(.b, version: v2, size: 4096, crc32: 1, attempts: 3, permanent: false)
    state.beginAttempt()
    let journal = TransferJournal(
      slot: .a, state: .receiving, size: 103_068, crc32: 0x0abc,
      version: Version(major: 2, minor: 1, revision: 0),
      committedOffset: 65536)
    var configuration = DaemonConfiguration()
    configuration.trust.keyFiles = ["/etc/otad/key.pem"]
    return DeviceStatusReport(
      status: DeviceStatus(
        boot: .present(state), transfer: .present(journal), slotCapacities: SlotPair(repeating: 16 << 20)),
      reading: BootStateReading(state: state, saved: state, movedAside: [], recovery: nil),
      runningImage: .intact("crc32"), layout: layout, configuration: configuration)
  }

  @Test func textShowsTheSlotsTheTrialAndTheTransfer() {
    #expect(
      Self.trialReport().lines == [
        "running: slot B (on trial)",
        "running image: intact",
        "    slot A: firmware 1.0.0+0, good  (/var/lib/otad/slot-a.img, 16777216 bytes)",
        "  ▶ slot B: firmware 2.0.1+7, on trial  (/var/lib/otad/slot-b.img, 16777216 bytes)",
        "trial: slot B, 1 of 3 boot(s) used",
        "last update: none",
        "trust: signed by one of /etc/otad/key.pem; downgrades refused; security counter floor 0; "
          + "encrypted images refused (no decryption key)",
        "transfer: receiving firmware 2.1.0+0 into slot A: 65536 of 103068 bytes committed (63%)",
      ])
  }

  @Test func jsonKeepsTheDocumentedFieldsAndNulls() throws {
    var report = Self.trialReport()
    report.runningImage = nil
    report.slots[0].version = nil
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let data = try encoder.encode(report)
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(
      Set(object.keys) == [
        "running", "confirmed", "onTrial", "bootloader", "slots", "trial", "lastOutcome", "bootState",
        "runningImage", "provisional", "securityFloor", "signaturesRequired", "trustedKeys",
        "downgradesAllowed", "decryptionKey",
        "transfer",
      ])
    #expect(object["runningImage"] is NSNull, "null, not absent")
    let slots = try #require(object["slots"] as? [[String: Any]])
    #expect(slots[0]["version"] is NSNull && slots[1]["version"] as? String == "2.0.1+7")
    #expect(
      slots[1]["path"] as? String == "/var/lib/otad/slot-b.img" && slots[1]["capacity"] as? Int == 16 << 20)
    let transfer = try #require(object["transfer"] as? [String: Any])
    #expect(transfer["crc32"] as? String == "00000abc" && transfer["committed"] as? Int == 65536)
    #expect(try JSONDecoder().decode(DeviceStatusReport.self, from: data) == report)
  }

  @Test func aFactoryDeviceHasNoTrialAndAMissingTransfer() throws {
    let state = BootState.factory(version: Self.v1)
    let report = DeviceStatusReport(
      status: DeviceStatus(
        boot: .missing, transfer: .damaged(reason: "checksum"), slotCapacities: SlotPair(a: 1, b: 2)),
      reading: BootStateReading(state: state, saved: nil, movedAside: [], recovery: nil),
      runningImage: nil, layout: Self.layout, configuration: DaemonConfiguration())
    let data = try JSONEncoder().encode(report)
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(object["trial"] == nil && object["rebuilt"] == nil)
    #expect(object["transfer"] as? String == "damaged" && object["bootState"] as? String == "missing")
    #expect(report.lines.contains("boot state: none yet (a factory device)"))
    #expect(report.lines.last == "transfer: journal damaged (it will be moved aside at the next start)")
    #expect(try JSONDecoder().decode(DeviceStatusReport.self, from: data) == report)
  }

  /// The composition end to end on real files: a factory device as `otad status` reads it, with
  /// nothing written to the state directory.
  @Test func theDaemonReportsAFactoryDeviceFromItsLayout() throws {
    let temporary = try TemporaryDirectory(label: "status")
    defer { temporary.remove() }
    let directory = temporary.path
    var configuration = DaemonConfiguration()
    configuration.slotA = directory + "/a.img"
    configuration.slotB = directory + "/b.img"
    configuration.slotCapacity = 4096
    configuration.stateDirectory = directory + "/state"
    let daemon = try Daemon(
      layout: DeviceLayout(parsing: configuration), configuration: configuration, policy: ImagePolicy())
    let report = try daemon.statusReport()
    #expect(
      report.running == "A" && report.confirmed == "A" && !report.onTrial && report.bootloader == "file")
    #expect(report.slots.map(\.path) == [directory + "/a.img", directory + "/b.img"])
    #expect(report.slots.map(\.capacity) == [4096, 4096] && report.slots.map(\.status) == ["good", "empty"])
    #expect(report.bootState == "missing" && report.transfer == .missing && report.rebuilt == nil)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/state").isEmpty)
    #expect(report.runningImage != nil, "otad status checks the running image")
    let unchecked = try daemon.statusReport(checkingImage: false)
    #expect(unchecked.runningImage == nil, "a watcher's report does not")
    var same = unchecked
    same.runningImage = report.runningImage
    #expect(same == report, "and differs in nothing else")
  }
}
