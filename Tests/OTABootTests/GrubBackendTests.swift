import Foundation
import OTAStorage
import OTATestSupport
import OTAWire
import Testing

@testable import OTABoot

@Suite("GrubBackend")
struct GrubBackendTests {
  func backend(_ tools: FakeTools) -> GrubBackend {
    GrubBackend(
      tools: tools.runner, environmentFile: tools.directory + "/grubenv",
      cmdline: tools.directory + "/cmdline")
  }

  func trial(_ left: Int) -> BootPlan { BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: left)) }

  func list(_ backend: GrubBackend) -> String { "grub-editenv \(backend.environmentFile) list" }

  /// The calls of one write: a new block made beside the old one, which the backend then renames
  /// over it (no tool call).
  func write(_ backend: GrubBackend, _ assignments: String) -> [String] {
    let staging = backend.environmentFile + ".tmp"
    return ["grub-editenv \(staging) create", "grub-editenv \(staging) set \(assignments)"]
  }

  @Test func followsTrialCountdownConfirmAndRollback() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      let file = backend.environmentFile
      try tools.write(["saved_entry": "0", "ORDER": "A", "A_OK": "1", "A_TRY": "0"], to: file)

      // Trial of B over A: both OK and untried, B first.
      try backend.apply(trial(3))
      #expect(
        tools.log() == [list(backend)]
          + write(backend, "saved_entry=0 'ORDER=B A' A_OK=1 B_OK=1 A_TRY=0 B_TRY=0"))
      #expect(
        try tools.variables(in: file) == [
          "saved_entry": "0", "ORDER": "B A", "A_OK": "1", "B_OK": "1", "A_TRY": "0", "B_TRY": "0",
        ])

      // GRUB boots B and marks it tried; otad, with attempts left, clears the mark: one more try.
      var environment = try tools.variables(in: file)
      #expect(BootloaderSimulation.grub(&environment) == .b)
      try tools.write(environment, to: file)
      tools.clearLog()
      try backend.apply(trial(2))
      #expect(
        tools.log() == [list(backend)]
          + write(backend, "saved_entry=0 'ORDER=B A' A_OK=1 B_OK=1 A_TRY=0 B_TRY=0"))
      #expect(try tools.variables(in: file)["B_TRY"] == "0")

      // Confirm B: B alone; A not OK.
      tools.clearLog()
      try backend.apply(BootPlan(primary: .b))
      #expect(
        tools.log() == [list(backend)] + write(backend, "saved_entry=0 ORDER=B A_OK=0 B_OK=1 A_TRY=0 B_TRY=0")
      )
      environment = try tools.variables(in: file)
      #expect(environment["ORDER"] == "B" && environment["A_OK"] == "0" && environment["B_OK"] == "1")
    }
  }

  /// Found by the real GRUB test: a power cut between grub-editenv's truncation and its write leaves
  /// a 0-byte block, and a zeroed one is as bad; grub-editenv refuses both as invalid. The backend
  /// reads such a block as holding nothing and writes a new one in its place.
  @Test(arguments: ["empty", "zeroed"])
  func anInvalidBlockIsReplacedNotAStop(damage: String) throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      let file = backend.environmentFile
      try Data(count: damage == "empty" ? 0 : 1024).write(to: URL(fileURLWithPath: file))
      try writeText("root=/dev/vda2 rauc.slot=A\n", to: tools.directory + "/cmdline")
      #expect(try backend.pointer() == BootPointer(booted: .a), "no variables, so no pointer")
      tools.clearLog()
      try backend.apply(BootPlan(primary: .b))
      #expect(
        tools.log() == [list(backend)] + write(backend, "ORDER=B A_OK=0 B_OK=1 A_TRY=0 B_TRY=0"))
      #expect(try tools.variables(in: file)["ORDER"] == "B")
    }
  }

  @Test func rollbackToAAfterATrialOfB() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      try backend.apply(trial(3))
      tools.clearLog()
      try backend.apply(BootPlan(primary: .a))
      #expect(tools.log() == [list(backend)] + write(backend, "ORDER=A A_OK=1 B_OK=0 A_TRY=0 B_TRY=0"))
      #expect(
        try tools.variables(in: backend.environmentFile) == [
          "ORDER": "A", "A_OK": "1", "B_OK": "0", "A_TRY": "0", "B_TRY": "0",
        ])
    }
  }

  @Test func applyingTheSamePlanTwiceWritesNothing() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      for plan in [trial(3), trial(1), BootPlan(primary: .b), BootPlan(primary: .a)] {
        try backend.apply(plan)
        tools.clearLog()
        try backend.apply(plan)
        #expect(tools.log() == [list(backend)], "\(plan)")
      }
    }
  }

  @Test func theSchemeGivesTheTrialOneTryPerApplyAndNeverStrands() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      try backend.apply(trial(3))
      var environment = try tools.variables(in: backend.environmentFile)
      // Without otad: B once, then A, and A again even though it is marked tried.
      let boots = (0..<3).map { _ in BootloaderSimulation.grub(&environment) }
      #expect(boots == [.b, .a, .a])
    }
  }

  @Test func failingToolsGiveReadableErrors() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      try tools.makeFail(
        "grub-editenv", with: "grub-editenv: error: cannot rename the file \(backend.environmentFile).new")
      #expect(
        throws: BootBackendError(
          "`grub-editenv \(backend.environmentFile) list` exited with status 1: grub-editenv: error: cannot rename the file \(backend.environmentFile).new"
        )
      ) { try backend.apply(trial(3)) }
    }
  }

  @Test func readsTheBootedSlotFromTheKernelCommandLine() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      try writeText("BOOT_IMAGE=/B/vmlinuz root=PARTLABEL=root-b ro quiet rauc.slot=B\n", to: backend.cmdline)
      #expect(try backend.bootedSlot() == .b)
      try writeText("BOOT_IMAGE=/vmlinuz root=/dev/sda2 ro quiet\n", to: backend.cmdline)
      let error = #expect(throws: BootBackendError.self) { try backend.bootedSlot() }
      #expect(
        error?.description.contains("on each menuentry's linux line in grub.cfg, add rauc.slot=A") == true)
    }
  }

  @Test func readsItsPointerBackFromTheOrder() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      try writeText("quiet rauc.slot=B\n", to: backend.cmdline)
      try backend.apply(trial(2))
      #expect(try backend.pointer() == BootPointer(primary: .a, trial: .b, booted: .b))
      try backend.apply(BootPlan(primary: .b))
      #expect(try backend.pointer() == BootPointer(primary: .b, booted: .b))
    }
  }

  @Test func defaultsAndName() {
    let backend = GrubBackend(tools: ToolRunner())
    #expect(backend.name == "grub")
    #expect(backend.environmentFile == "/boot/grub/grubenv")
    #expect(backend.restartCommand(for: trial(3)) == nil)
  }
}
