import Foundation
import OTATestSupport
import Testing

@testable import OTABoot

/// The GRUB backend against Debian's real `grub-editenv` (grub-common, which Scripts/setup.sh
/// installs): what it writes is what GRUB's `load_env` reads, and the damage a power cut leaves on
/// the block is mended rather than stopping the boot stage.
@Suite("GrubBackend with the real grub-editenv")
struct GrubRealToolsTests {
  static var installed: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/grub-editenv") }

  @Test(
    .enabled(if: installed, "grub-common is not installed (Scripts/setup.sh installs it)"),
    arguments: ["missing", "empty", "zeroed", "valid"])
  func theBackendWritesABlockTheRealToolReadsBack(start: String) throws {
    try withTemporaryDirectory { directory in
      let file = directory + "/grubenv"
      let runner = ToolRunner(searchPath: "/usr/bin:/bin")
      switch start {
      case "missing": break
      case "empty": try Data().write(to: URL(fileURLWithPath: file))
      case "zeroed": try Data(count: 1024).write(to: URL(fileURLWithPath: file))
      default: try runner.runText("grub-editenv", [file, "set", "saved_entry=0"])
      }
      try writeText("rauc.slot=A\n", to: directory + "/cmdline")
      let backend = GrubBackend(tools: runner, environmentFile: file, cmdline: directory + "/cmdline")
      try backend.apply(BootPlan(primary: .a, trial: .init(slot: .b, attemptsLeft: 2)))
      let listed = VariableListing.parse(try runner.runText("grub-editenv", [file, "list"]))
      #expect(
        listed["ORDER"] == "B A" && listed["A_OK"] == "1" && listed["B_OK"] == "1" && listed["B_TRY"] == "0")
      #expect(try backend.pointer() == BootPointer(primary: .a, trial: .b, booted: .a))
      #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count == 1024, "GRUB's block is 1 KiB")
      if start == "valid" { #expect(listed["saved_entry"] == "0", "other variables are kept") }
    }
  }
}
