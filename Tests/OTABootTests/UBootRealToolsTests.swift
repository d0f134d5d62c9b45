import Foundation
import OTATestSupport
import Testing

@testable import OTABoot

/// The U-Boot backend against the real `fw_printenv` and `fw_setenv` (Debian's libubootenv-tool,
/// which Scripts/setup.sh installs), on an environment in a file as U-Boot lays it out in flash: a
/// CRC32, then NAME=value strings. The fakes in FakeTools behave as these tools do; this suite is
/// what keeps them honest.
@Suite("UBootBackend with libubootenv's tools")
struct UBootRealToolsTests {
  static let tools = ["/usr/bin/fw_printenv", "/usr/bin/fw_setenv"]
  static var installed: Bool { tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }

  /// A 256 KiB environment (qemu_arm64's size) in `directory/env.img`, first written by fw_setenv
  /// from a default environment as a board's first `saveenv` would, and the fw_env.config naming it.
  func environment(in directory: String) throws -> String {
    let image = directory + "/env.img"
    try Data(repeating: 0xFF, count: 0x40000).write(to: URL(fileURLWithPath: image))
    let config = directory + "/fw_env.config"
    try writeText("\(image) 0x0 0x40000 0x40000\n", to: config)
    try writeText("bootdelay=2\nbootcmd=run distro_bootcmd\n", to: directory + "/default-env")
    let runner = ToolRunner(searchPath: "/usr/bin:/bin")
    try runner.runText("fw_setenv", ["-c", config, "-f", directory + "/default-env", "bootdelay", "2"])
    return config
  }

  @Test(.enabled(if: installed, "libubootenv-tool is not installed (Scripts/setup.sh installs it)"))
  func whatTheBackendWritesTheRealToolsReadBack() throws {
    try withTemporaryDirectory { directory in
      let config = try environment(in: directory)
      try writeText("root=/dev/vda2 rauc.slot=A\n", to: directory + "/cmdline")
      let runner = ToolRunner(searchPath: "/usr/bin:/bin")
      let backend = UBootBackend(tools: runner, cmdline: directory + "/cmdline", config: config)

      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 3)))
      let written = VariableListing.parse(try runner.runText("fw_printenv", ["-c", config]))
      #expect(
        written["BOOT_ORDER"] == "B A" && written["BOOT_A_LEFT"] == "3" && written["BOOT_B_LEFT"] == "3")
      #expect(written["bootcmd"] == "run distro_bootcmd", "the board's own variables are kept")
      #expect(try backend.pointer() == BootPointer(primary: .a, trial: .b, booted: .a))

      try backend.apply(BootPlan(primary: .b))
      let confirmed = VariableListing.parse(try runner.runText("fw_printenv", ["-c", config]))
      #expect(
        confirmed["BOOT_ORDER"] == "B" && confirmed["BOOT_A_LEFT"] == "0" && confirmed["BOOT_B_LEFT"] == "3")
    }
  }

  /// The older script format, `NAME value`, is what the backend wrote before it met these tools:
  /// libubootenv skips such lines and exits 0, so every write was lost without an error.
  @Test(.enabled(if: installed, "libubootenv-tool is not installed (Scripts/setup.sh installs it)"))
  func theRealToolsSkipTheOlderScriptFormatWithoutAWord() throws {
    try withTemporaryDirectory { directory in
      let config = try environment(in: directory)
      let runner = ToolRunner(searchPath: "/usr/bin:/bin")
      try runner.runText("fw_setenv", ["-c", config, "--script", "-"], input: "BOOT_ORDER B A\n")
      #expect(VariableListing.parse(try runner.runText("fw_printenv", ["-c", config]))["BOOT_ORDER"] == nil)
      try runner.runText("fw_setenv", ["-c", config, "--script", "-"], input: "BOOT_ORDER=B A\n")
      #expect(
        VariableListing.parse(try runner.runText("fw_printenv", ["-c", config]))["BOOT_ORDER"] == "B A")
    }
  }
}
