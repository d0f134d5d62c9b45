import Foundation
import OTAStorage
import OTASystem
import OTATestSupport
import OTAWire
import Testing

@testable import OTABoot

@Suite("TrybootBackend")
struct TrybootBackendTests {
  /// A boot directory and a fake `/proc/device-tree/chosen/bootloader` in `directory`.
  func backend(in directory: String) throws -> TrybootBackend {
    for sub in ["boot", "bootloader"] {
      try FileManager.default.createDirectory(
        atPath: directory + "/" + sub, withIntermediateDirectories: true)
    }
    return TrybootBackend(
      bootDirectory: directory + "/boot", partitions: SlotPair(a: 2, b: 3),
      bootloaderNode: directory + "/bootloader")
  }

  func autoboot(_ backend: TrybootBackend) throws -> String {
    try String(contentsOfFile: backend.autobootFile, encoding: .utf8)
  }

  /// Writes a device-tree property as the firmware does: big-endian.
  func setProperty(_ name: String, _ value: UInt32, extra: [UInt8] = [], in backend: TrybootBackend) throws {
    let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } + extra
    try Data(bytes).write(to: URL(fileURLWithPath: backend.bootloaderNode + "/" + name))
  }

  @Test func followsTrialCountdownConfirmAndRollback() throws {
    try withTemporaryDirectory { directory in
      let backend = try backend(in: directory)

      // Trial of B (partition 3) over A (partition 2): `reboot "0 tryboot"` starts it once.
      let trial = BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 3))
      try backend.apply(trial)
      #expect(
        try autoboot(backend) == "[all]\ntryboot_a_b=1\nboot_partition=2\n[tryboot]\nboot_partition=3\n")
      #expect(backend.restartCommand(for: trial) == ["reboot", "0 tryboot"])
      let afterTrial = try identity(of: backend.autobootFile)

      // The countdown lives in otad's state: the file stays as it is, each restart is a tryboot.
      for left in [2, 1] {
        let plan = BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: left))
        try backend.apply(plan)
        #expect(try identity(of: backend.autobootFile) == afterTrial)
        #expect(backend.restartCommand(for: plan) == ["reboot", "0 tryboot"])
      }

      // Confirm B: B in both sections, a plain restart.
      try backend.apply(BootPlan(primary: .b))
      #expect(
        try autoboot(backend) == "[all]\ntryboot_a_b=1\nboot_partition=3\n[tryboot]\nboot_partition=3\n")
      #expect(backend.restartCommand(for: BootPlan(primary: .b)) == nil)

      // A later trial of A over B, rolled back: B in both sections again.
      try backend.apply(BootPlan(primary: .b, trial: .init(slot: .a, attemptsLeft: 3)))
      #expect(
        try autoboot(backend) == "[all]\ntryboot_a_b=1\nboot_partition=3\n[tryboot]\nboot_partition=2\n")
      try backend.apply(BootPlan(primary: .b))
      #expect(
        try autoboot(backend) == "[all]\ntryboot_a_b=1\nboot_partition=3\n[tryboot]\nboot_partition=3\n")
      #expect(try FileManager.default.contentsOfDirectory(atPath: backend.bootDirectory) == ["autoboot.txt"])
    }
  }

  @Test func rollbackToAAfterATrialOfB() throws {
    try withTemporaryDirectory { directory in
      let backend = try backend(in: directory)
      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 1)))
      try backend.apply(BootPlan(primary: .a))
      #expect(
        try autoboot(backend) == "[all]\ntryboot_a_b=1\nboot_partition=2\n[tryboot]\nboot_partition=2\n")
    }
  }

  @Test func applyingTheSamePlanTwiceWritesNothingButADifferentFileIsReplaced() throws {
    try withTemporaryDirectory { directory in
      let backend = try backend(in: directory)
      try writeText("[all]\nboot_partition=2\n", to: backend.autobootFile)
      let handwritten = try identity(of: backend.autobootFile)
      try backend.apply(BootPlan(primary: .a))
      let first = try identity(of: backend.autobootFile)
      #expect(first.inode != handwritten.inode)
      try backend.apply(BootPlan(primary: .a))
      #expect(try identity(of: backend.autobootFile) == first)
    }
  }

  @Test func readsTheBootedPartitionAndTheTrybootFlag() throws {
    try withTemporaryDirectory { directory in
      let backend = try backend(in: directory)
      try setProperty("partition", 3, in: backend)
      try setProperty("tryboot", 1, in: backend)
      #expect(try backend.booted() == (.b, true))
      #expect(try backend.bootedSlot() == .b)

      // Firmware without the tryboot property; a property with bytes after the number.
      try FileManager.default.removeItem(atPath: backend.bootloaderNode + "/tryboot")
      try setProperty("partition", 2, extra: [0, 0, 0, 0], in: backend)
      #expect(try backend.booted() == (.a, false))
      try setProperty("tryboot", 0, in: backend)
      #expect(try backend.booted() == (.a, false))
    }
  }

  @Test func readsItsPointerBackFromAutobootTxt() throws {
    try withTemporaryDirectory { directory in
      let backend = try backend(in: directory)
      try setProperty("partition", 3, in: backend)
      try setProperty("tryboot", 1, in: backend)
      #expect(try backend.pointer() == BootPointer(booted: .b), "no autoboot.txt yet")
      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 1)))
      #expect(try backend.pointer() == BootPointer(primary: .a, trial: .b, booted: .b))
      try backend.apply(BootPlan(primary: .b))
      #expect(try backend.pointer() == BootPointer(primary: .b, booted: .b))
    }
  }

  @Test func reportsUnknownPartitionsAndUnreadableProperties() throws {
    try withTemporaryDirectory { directory in
      let backend = try backend(in: directory)
      #expect(
        throws: BootBackendError(
          "\(backend.bootloaderNode)/partition does not exist: the firmware did not say which partition it booted"
        )
      ) { try backend.bootedSlot() }

      try setProperty("partition", 5, in: backend)
      #expect(
        throws: BootBackendError(
          "the firmware booted partition 5, which is neither slot A's (2) nor slot B's (3)")
      ) { try backend.bootedSlot() }

      try Data([0, 2]).write(to: URL(fileURLWithPath: backend.bootloaderNode + "/partition"))
      #expect(
        throws: BootBackendError(
          "\(backend.bootloaderNode)/partition holds 2 bytes, not a 4-byte big-endian number")
      ) { try backend.bootedSlot() }
    }
  }

  @Test func reportsABadPartitionListAndAMissingBootDirectory() throws {
    try withTemporaryDirectory { directory in
      let same = TrybootBackend(bootDirectory: directory, partitions: SlotPair(a: 2, b: 2))
      #expect(
        throws: BootBackendError(
          "tryboot needs two different partition numbers for slots A and B, not [2, 2]")
      ) { try same.apply(BootPlan(primary: .a)) }
      let missing = TrybootBackend(bootDirectory: directory + "/nope", partitions: SlotPair(a: 2, b: 3))
      #expect(
        throws: BootBackendError(
          "open \(directory)/nope/autoboot.txt.tmp: No such file or directory (errno 2)", errno: .noSuchFile)
      ) {
        try missing.apply(BootPlan(primary: .a))
      }
      // A boot directory that is a file: the errno kept, and the storage's remedy said.
      try FileSystem.writeFile(directory + "/file", [1])
      let file = TrybootBackend(bootDirectory: directory + "/file", partitions: SlotPair(a: 2, b: 3))
      let error = #expect(throws: BootBackendError.self) { try file.apply(BootPlan(primary: .a)) }
      #expect(error?.errno == .notDirectory)
      #expect(
        error?.description.hasSuffix("is a file, not a directory: remove it or configure another path")
          == true,
        "\(String(describing: error))")
    }
  }

  @Test func isNamedTryboot() {
    #expect(TrybootBackend(bootDirectory: "/boot", partitions: SlotPair(a: 2, b: 3)).name == "tryboot")
  }
}

/// TrybootBackend against the firmware's documented behaviour (PiFirmwareSimulation cites each
/// rule): what otad writes and the restart it asks for start the slot the plan says, and what the
/// firmware then reports is what otad reads back.
@Suite("TrybootBackend through the Pi firmware's documented rules")
struct TrybootFirmwareTests {
  @Test func trialCrashConfirmAndRollbackStartWhatThePlanSays() throws {
    try withTemporaryDirectory { directory in
      let backend = try TrybootBackendTests().backend(in: directory)
      var firmware = PiFirmwareSimulation()
      func boot() throws -> SlotID? {
        let partition = try firmware.boot(
          autoboot: FileManager.default.contents(atPath: backend.autobootFile), node: backend.bootloaderNode)
        let slot = try backend.bootedSlot()
        #expect(partition == (slot == .a ? 2 : 3), "the firmware booted partition \(partition)")
        return slot
      }

      try backend.apply(BootPlan(primary: .a))
      #expect(try boot() == .a)
      #expect(try backend.booted().tryboot == false)

      // The trial of B starts only under the restart otad asks for, and only once.
      let trial = BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 2))
      try backend.apply(trial)
      #expect(try boot() == .a, "a plain reset does not start the trial")
      firmware.reboot(try #require(backend.restartCommand(for: trial)))
      #expect(try boot() == .b)
      #expect(try backend.booted().tryboot == true)
      // The trial crashes (watchdog): the flag was cleared, the primary comes back.
      firmware.reset()
      #expect(try boot() == .a)
      #expect(try backend.booted().tryboot == false)

      // Another attempt, then confirmed: B boots without tryboot, and a stray tryboot starts B too.
      firmware.reboot(try #require(backend.restartCommand(for: trial)))
      #expect(try boot() == .b)
      try backend.apply(BootPlan(primary: .b))
      #expect(backend.restartCommand(for: BootPlan(primary: .b)) == nil)
      firmware.reset()
      #expect(try boot() == .b)
      firmware.reboot(["reboot", "0 tryboot"])
      #expect(try boot() == .b, "without a trial both sections name the primary")

      // A trial of A rolled back: A never starts again, whatever the restart.
      try backend.apply(BootPlan(primary: .b, trial: .init(slot: .a, attemptsLeft: 1)))
      try backend.apply(BootPlan(primary: .b))
      firmware.reboot(["reboot", "0 tryboot"])
      #expect(try boot() == .b)
    }
  }

  @Test func autobootTxtStaysWithinTheFirmwaresFiveHundredTwelveBytes() throws {
    try withTemporaryDirectory { directory in
      let backend = try TrybootBackendTests().backend(in: directory)
      for plan in [
        BootPlan(primary: .a), BootPlan(primary: .b),
        BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 9)),
      ] {
        try backend.apply(plan)
        let size = try FileManager.default.attributesOfItem(atPath: backend.autobootFile)[.size] as? Int
        #expect((size ?? 513) <= 512)
      }
    }
  }
}
