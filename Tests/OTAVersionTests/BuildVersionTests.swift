import Foundation
import OTAVersion
import Testing

@Suite struct BuildVersionTests {
  @Test func theLineNamesTheProgramReleaseAndCommit() {
    #expect(BlueOTAVersion.line("otad", release: "0.4.0", commit: "9ad4bd7") == "otad 0.4.0 (commit 9ad4bd7)")
    #expect(BlueOTAVersion.line("otactl", release: "0.4.0", commit: nil) == "otactl 0.4.0 (unknown commit)")
  }

  /// The BuildCommit plugin ran before this build: the commit is the checkout's HEAD (when the tests
  /// are built in a git checkout; without one it must be nil).
  @Test func theCommitIsTheCheckoutsHead() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let git = Process()
    git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    git.arguments = ["git", "-C", root.path, "rev-parse", "--short=7", "HEAD"]
    let output = Pipe()
    git.standardOutput = output
    git.standardError = FileHandle.nullDevice
    try git.run()
    git.waitUntilExit()
    let head = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    if git.terminationStatus == 0 {
      let commit = try #require(BlueOTAVersion.commit, "built in a git checkout, yet no commit")
      #expect(
        commit == head,
        "built from \(commit), the checkout's HEAD is \(head): build again (swift build) after a commit")
    } else {
      #expect(BlueOTAVersion.commit == nil)
    }
  }
}
