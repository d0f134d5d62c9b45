import Foundation
import OTATestSupport
import Testing

/// The conventions Linux tools keep, on the built programs: `--version` with the build's commit,
/// and sd-daemon(3) priorities when standard error is the journal's stream.
@Suite struct ConventionProcessTests {
  /// The checkout's HEAD abbreviated as the build abbreviates it, or nil outside git.
  static func head() throws -> String? {
    let git = Process()
    git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    git.arguments = ["git", "-C", RepositoryRoot.url.path, "rev-parse", "--short=7", "HEAD"]
    let output = Pipe()
    git.standardOutput = output
    git.standardError = FileHandle.nullDevice
    try git.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    git.waitUntilExit()
    return git.terminationStatus == 0 ? text.trimmingCharacters(in: .whitespacesAndNewlines) : nil
  }

  @Test(arguments: ["otad", "otactl", "ota-lab"])
  func versionNamesTheReleaseAndTheCommitBuilt(_ program: String) throws {
    let result = try runTool(program, ["--version"])
    #expect(result.status == 0)
    let commit = try Self.head().map { "commit \($0)" } ?? "unknown commit"
    #expect(
      result.output == "\(program) 0.5.0 (\(commit))\n",
      "\(result.output): a commit since the last build? build again")
  }

  /// `otad boot` on a new device, its standard error a file; JOURNAL_STREAM naming that file or not.
  func bootLog(journalStream: (Data) -> String?) throws -> String {
    let daemon = try Daemon(firmware: testBytes(4096, seed: 3))
    let log = daemon.folder.appendingPathComponent("stderr.log")
    FileManager.default.createFile(atPath: log.path, contents: nil)
    let attributes = try FileManager.default.attributesOfItem(atPath: log.path)
    let device = try #require(attributes[.systemNumber] as? Int)
    let inode = try #require(attributes[.systemFileNumber] as? Int)
    let process = Process()
    process.executableURL = Binaries.url("otad")
    process.arguments = ["boot"] + daemon.storageArguments
    var environment = ProcessInfo.processInfo.environment
    environment["JOURNAL_STREAM"] = journalStream(Data("\(device):\(inode)".utf8))
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    process.standardError = try FileHandle(forWritingTo: log)
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    return try String(contentsOf: log, encoding: .utf8)
  }

  @Test func onTheJournalsStreamEachLineStartsWithItsPriority() throws {
    let text = try bootLog { String(decoding: $0, as: UTF8.self) }
    let lines = text.split(separator: "\n")
    #expect(!lines.isEmpty)
    for line in lines {
      #expect((2...7).contains { line.hasPrefix("<\($0)>otad-boot: ") }, "\(line)")
    }
    // A slot A with no MCUboot header is a warning at the boot stage: priority 4, what
    // `journalctl -p warning` shows.
    #expect(
      lines.contains { $0.hasPrefix("<4>otad-boot: image check: slot A holds no MCUboot header") }, "\(text)")
    #expect(lines.contains { $0.hasPrefix("<6>otad-boot: ") || $0.hasPrefix("<5>otad-boot: ") }, "\(text)")
  }

  @Test func anywhereElseTheLinesAreAsBefore() throws {
    // Unset, and naming another file (standard error redirected since systemd started the unit).
    for variable in [nil, "1:2"] as [String?] {
      let text = try bootLog { _ in variable }
      #expect(!text.isEmpty)
      #expect(!text.contains("<6>") && !text.contains("<5>") && !text.contains("<4>"), "\(text)")
      #expect(text.contains(" info otad-boot:") || text.contains(" notice otad-boot:"), "\(text)")
    }
  }
}
