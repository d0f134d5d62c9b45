import Foundation
import OTAStorage
import OTATestSupport
import OTAWire
import Testing

@testable import OTABoot

@Suite("UBootBackend")
struct UBootBackendTests {
  func backend(_ tools: FakeTools, primaryAttempts: Int = 3) -> UBootBackend {
    UBootBackend(tools: tools.runner, cmdline: tools.directory + "/cmdline", primaryAttempts: primaryAttempts)
  }

  func trial(_ left: Int) -> BootPlan { BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: left)) }

  @Test func readsItsPointerBackFromTheOrder() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.setUBootEnvironment(["BOOT_ORDER": "A", "BOOT_A_LEFT": "3"])
      try writeText("root=/dev/mmcblk0p2 rauc.slot=A\n", to: tools.directory + "/cmdline")
      let backend = backend(tools)
      #expect(try backend.pointer() == BootPointer(primary: .a, booted: .a))
      try backend.apply(trial(3))
      #expect(try backend.pointer() == BootPointer(primary: .a, trial: .b, booted: .a))
      try tools.setUBootEnvironment(["BOOT_ORDER": "nonsense"])
      #expect(try backend.pointer() == BootPointer(booted: .a), "an order it cannot read tells nothing")
    }
  }

  @Test func followsTrialCountdownConfirmAndRollback() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.setUBootEnvironment(["bootcmd": "run distro_bootcmd", "BOOT_ORDER": "A", "BOOT_A_LEFT": "3"])
      let backend = backend(tools)

      // Trial of B over A: one read, one scripted write of all three variables.
      try backend.apply(trial(3))
      #expect(
        tools.log() == [
          "fw_printenv", "fw_setenv --script -", "  BOOT_ORDER=B A", "  BOOT_A_LEFT=3", "  BOOT_B_LEFT=3",
        ])
      #expect(
        try tools.ubootEnvironment() == [
          "bootcmd": "run distro_bootcmd", "BOOT_ORDER": "B A", "BOOT_A_LEFT": "3", "BOOT_B_LEFT": "3",
        ])

      // U-Boot starts B and counts the boot; otad's state counted it too: nothing to write.
      var environment = try tools.ubootEnvironment()
      #expect(BootloaderSimulation.uboot(&environment) == .b)
      try tools.setUBootEnvironment(environment)
      tools.clearLog()
      try backend.apply(trial(2))
      #expect(tools.log() == ["fw_printenv"])

      // otad says 1 left where U-Boot still has 2 (say, the state was counted down on its own): otad wins.
      try backend.apply(trial(1))
      #expect(
        tools.log() == [
          "fw_printenv", "fw_printenv", "fw_setenv --script -", "  BOOT_ORDER=B A", "  BOOT_A_LEFT=3",
          "  BOOT_B_LEFT=1",
        ])
      #expect(try tools.ubootEnvironment()["BOOT_B_LEFT"] == "1")

      // Confirm B: B alone, A may not boot.
      tools.clearLog()
      try backend.apply(BootPlan(primary: .b))
      #expect(
        tools.log() == [
          "fw_printenv", "fw_setenv --script -", "  BOOT_ORDER=B", "  BOOT_A_LEFT=0", "  BOOT_B_LEFT=3",
        ])
      #expect(
        try tools.ubootEnvironment() == [
          "bootcmd": "run distro_bootcmd", "BOOT_ORDER": "B", "BOOT_A_LEFT": "0", "BOOT_B_LEFT": "3",
        ])
    }
  }

  @Test func rollbackToAAfterATrialOfB() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools, primaryAttempts: 5)
      try backend.apply(trial(3))
      #expect(try tools.ubootEnvironment() == ["BOOT_ORDER": "B A", "BOOT_A_LEFT": "5", "BOOT_B_LEFT": "3"])
      tools.clearLog()
      try backend.apply(BootPlan(primary: .a))
      #expect(
        tools.log() == [
          "fw_printenv", "fw_setenv --script -", "  BOOT_ORDER=A", "  BOOT_A_LEFT=5", "  BOOT_B_LEFT=0",
        ])
      #expect(try tools.ubootEnvironment() == ["BOOT_ORDER": "A", "BOOT_A_LEFT": "5", "BOOT_B_LEFT": "0"])
    }
  }

  @Test func applyingTheSamePlanTwiceWritesNothing() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      for plan in [trial(3), BootPlan(primary: .b), BootPlan(primary: .a)] {
        try backend.apply(plan)
        tools.clearLog()
        try backend.apply(plan)
        #expect(tools.log() == ["fw_printenv"], "\(plan)")
      }
    }
  }

  @Test func oneDifferingVariableRewritesAllThreeInOneCall() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try tools.setUBootEnvironment(["BOOT_ORDER": "A", "BOOT_A_LEFT": "2", "BOOT_B_LEFT": "0"])
      try backend(tools).apply(BootPlan(primary: .a))
      #expect(
        tools.log() == [
          "fw_printenv", "fw_setenv --script -", "  BOOT_ORDER=A", "  BOOT_A_LEFT=3", "  BOOT_B_LEFT=0",
        ])
    }
  }

  @Test func theSchemeBootsTheTrialThenFallsBackWithoutOtad() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      try backend(tools).apply(trial(2))
      var environment = try tools.ubootEnvironment()
      // Nobody re-applies: B twice, then A for its three boots.
      let boots = (0..<6).map { _ in BootloaderSimulation.uboot(&environment) }
      #expect(boots == [.b, .b, .a, .a, .a, nil])
    }
  }

  @Test func failingToolsGiveReadableErrors() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      try tools.makeFail("fw_setenv", with: "Cannot access MTD device /dev/mtd1: No such file or directory")
      #expect(
        throws: BootBackendError(
          "`fw_setenv --script -` exited with status 1: Cannot access MTD device /dev/mtd1: No such file or directory"
        )
      ) { try backend.apply(trial(3)) }

      try tools.makeFail("fw_printenv", with: "Configuration file wrong or corrupted")
      tools.clearLog()
      #expect(
        throws: BootBackendError("`fw_printenv` exited with status 1: Configuration file wrong or corrupted")
      ) {
        try backend.apply(trial(3))
      }
      #expect(tools.log() == ["fw_printenv"])

      let nowhere = UBootBackend(tools: ToolRunner(searchPath: directory + "/empty"))
      #expect(throws: BootBackendError("fw_printenv: not found in \(directory)/empty")) {
        try nowhere.apply(trial(3))
      }
    }
  }

  @Test func readsTheBootedSlotFromTheKernelCommandLine() throws {
    try withTemporaryDirectory { directory in
      let tools = try FakeTools(in: directory)
      let backend = backend(tools)
      let cmdline = directory + "/cmdline"
      try writeText("console=ttyS0,115200 root=/dev/mmcblk0p3 rootwait rauc.slot=B\n", to: cmdline)
      #expect(try backend.bootedSlot() == .b)
      try writeText("root=/dev/mmcblk0p2 otad.slot=a", to: cmdline)
      #expect(try backend.bootedSlot() == .a)
      try writeText("console=ttyS0,115200 root=/dev/mmcblk0p2\n", to: cmdline)
      let error = #expect(throws: BootBackendError.self) { try backend.bootedSlot() }
      #expect(
        error?.description
          == "\(cmdline) names no slot: in the U-Boot script's bootargs, add rauc.slot=A or rauc.slot=B (or otad.slot=a|b) to each slot's kernel command line"
      )
      try FileManager.default.removeItem(atPath: cmdline)
      #expect(throws: BootBackendError("cannot read the kernel command line: \(cmdline) does not exist")) {
        try backend.bootedSlot()
      }
    }
  }

  @Test func needsNoRestartCommand() throws {
    let backend = UBootBackend(tools: ToolRunner())
    #expect(backend.name == "uboot")
    #expect(backend.restartCommand(for: trial(3)) == nil)
    #expect(backend.cmdline == "/proc/cmdline")
  }
}
