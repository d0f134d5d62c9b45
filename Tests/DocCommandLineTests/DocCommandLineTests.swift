import ArgumentParser
import Foundation
import Testing

@testable import ota_lab
@testable import otactl
@testable import otad

/// Every otad, otactl and ota-lab command line in README.md and docs/*.md is one the programs'
/// own parsers take: parsed (`parseAsRoot`), never run. A line the parser refuses (an option that
/// is gone or misspelled, a missing value, a value of the wrong type) fails here with the parser's
/// message, and so does one a command's validate() refuses (a value out of range, two options that
/// exclude each other). The commands read no file before they run (otad run's storage checks,
/// push's --devices, the gateway's --ca-file come after parsing), so the files an example names
/// need not exist here.
@Suite struct DocCommandLineTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// README.md and every docs/*.md, read now (so a doc changed since the build is checked as it is).
  static func docs() throws -> [(name: String, text: String)] {
    let docs = root.appendingPathComponent("docs")
    let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
      .sorted().map { "docs/\($0)" }
    return try (["README.md"] + names).map { name in
      (name, try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8))
    }
  }

  /// Nil when `line` parses; else the parser's message.
  static func refusal(_ line: DocCommandLine) -> String? {
    refusal(line.program, line.arguments)
  }

  static func refusal(_ program: String, _ arguments: [String]) -> String? {
    let command: any ParsableCommand.Type =
      switch program {
      case "otad": OTAD.self
      case "otactl": OTACtl.self
      default: OTALabCommand.self
      }
    do {
      _ = try command.parseAsRoot(arguments)
      return nil
    } catch {
      // --help, --version, --generate-completion-script: a clean exit, the line is right.
      if command.exitCode(for: error) == .success { return nil }
      return command.message(for: error)
    }
  }

  @Test func everyCommandLineInTheDocsParses() throws {
    var checked = 0
    var refused: [String] = []
    var skipped: [(String, String)] = []
    for doc in try Self.docs() {
      let (lines, skips) = DocCommandLine.lines(in: doc.text, file: doc.name)
      skipped += skips
      for line in lines {
        checked += 1
        if let message = Self.refusal(line) { refused.append("\(line)\n    \(message)") }
      }
    }
    print("doc command lines: \(checked) parsed, \(skipped.count) skipped as synopses")
    #expect(checked > 40, "only \(checked) command lines found: is the extraction broken?")
    #expect(
      refused.isEmpty,
      "\(refused.count) of \(checked) doc command lines do not parse:\n\(refused.joined(separator: "\n"))")
  }

  @Test func theCheckRefusesWhatTheParserRefuses() {
    // Files that do not exist here are no concern of the parse.
    #expect(Self.refusal("otactl", ["push", "f.bin", "--devices", "/nonexistent/devices.txt"]) == nil)
    #expect(
      Self.refusal(
        "otad",
        [
          "run", "--slot-a", "/nonexistent/a", "--slot-b", "/nonexistent/b", "--state-dir", "/nonexistent",
          "--socket", "/tmp/x.sock",
        ]) == nil)
    // An option that does not exist, a misspelled one, a value of the wrong type, a wrong subcommand.
    #expect(Self.refusal("otad", ["run", "--slot-c", "x"])?.contains("--slot-c") == true)
    #expect(Self.refusal("otad", ["status", "--socket", "/tmp/x.sock"])?.contains("--socket") == true)
    #expect(
      Self.refusal("otactl", ["push", "f.bin", "--device", "/tmp/x.sock", "--jsno"])?.contains("--jsno")
        == true)
    // Misspelled where the command needs it: validate() runs before ArgumentParser reports unknown
    // options, so its message says what is missing; the line is refused all the same.
    #expect(Self.refusal("otactl", ["push", "f.bin", "--devcie", "/tmp/x.sock"]) != nil)
    #expect(Self.refusal("ota-lab", ["--port", "PORT"])?.contains("PORT") == true)
    #expect(Self.refusal("otactl", ["frobnicate"]) != nil)
    // What a command's validate() refuses: two options that exclude each other.
    #expect(
      Self.refusal("otactl", ["push", "f.bin", "--device", "/tmp/x.sock", "--full", "--base", "b.bin"]) != nil
    )
    #expect(Self.refusal("otactl", ["--version"]) == nil)
    #expect(Self.refusal("otad", ["status", "--help"]) == nil)
  }

  @Test func theExtractionReadsFencesContinuationsAndShellSyntax() {
    let text = """
      otad run --slot-a outside-a-fence
      ```sh
      $ otad status --state-dir /var/lib/otad --json   # a comment
      sudo .build/debug/otactl push "my firmware.bin" \\
          --device /tmp/otad.sock | tee log
      BLUEOTA_X=1 ota-lab --keep && echo done
      swift build && .build/debug/otad --version
      otactl push <file> --device /tmp/otad.sock
      otactl info ... --json
      echo otad run
      ```
      """
    let (lines, skipped) = DocCommandLine.lines(in: text, file: "T.md")
    #expect(lines.map(\.program) == ["otad", "otactl", "ota-lab", "otad"])
    #expect(
      lines.map(\.arguments) == [
        ["status", "--state-dir", "/var/lib/otad", "--json"],
        ["push", "my firmware.bin", "--device", "/tmp/otad.sock"],
        ["--keep"], ["--version"],
      ])
    #expect(lines.map(\.line) == [3, 4, 6, 7])
    #expect(skipped.count == 2)
  }
}

/// docs/OTAD.md's table of exit codes is otad's own list.
@Suite struct OtadExitCodeDocTests {
  @Test func theDocListsEveryCodeOtadHasAndNoOther() throws {
    let text = try String(
      contentsOf: DocCommandLineTests.root.appendingPathComponent("docs/OTAD.md"), encoding: .utf8)
    let section = try #require(text.components(separatedBy: "## Exit codes").dropFirst().first)
      .components(separatedBy: "\n## ")[0]
    let codes = section.split(separator: "\n").compactMap { line -> Int32? in
      guard line.hasPrefix("| ") else { return nil }
      return Int32(line.dropFirst(2).prefix { $0.isNumber })
    }
    #expect(codes == OtadExitCode.allCases.map(\.rawValue))
  }
}
