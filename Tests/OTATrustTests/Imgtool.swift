import Foundation
import OTATestSupport
import Testing

/// MCUboot's own imgtool (PyPI, pinned by Scripts/setup.sh): found through $BLUEOTA_IMGTOOL, then
/// `<repo>/.build-imgtool/bin/imgtool`, then PATH. Missing, it fails the test that needs it.
struct Imgtool {
  struct NotFound: Error, CustomStringConvertible {
    let description: String
  }

  struct Result {
    let status: Int32
    /// Standard output, then standard error.
    var output: String { standardOutput + standardError }
    let standardOutput: String
    let standardError: String

    var succeeded: Bool { status == 0 }
  }

  let executable: String

  static func locate() throws -> Imgtool {
    let environment = ProcessInfo.processInfo.environment
    if let configured = environment["BLUEOTA_IMGTOOL"], !configured.isEmpty {
      guard FileManager.default.isExecutableFile(atPath: configured) else {
        throw NotFound(
          description: "BLUEOTA_IMGTOOL=\(configured) is not an executable file; run Scripts/setup.sh's "
            + "blueota_install_imgtool (or unset it)")
      }
      return Imgtool(executable: configured)
    }
    let venv = RepositoryRoot.url.appendingPathComponent(".build-imgtool/bin/imgtool").path
    if FileManager.default.isExecutableFile(atPath: venv) { return Imgtool(executable: venv) }
    for directory in (environment["PATH"] ?? "").split(separator: ":") {
      let candidate = "\(directory)/imgtool"
      if FileManager.default.isExecutableFile(atPath: candidate) { return Imgtool(executable: candidate) }
    }
    throw NotFound(
      description: "imgtool not found (interop tests need MCUboot's imgtool 2.5.0): run Scripts/setup.sh "
        + "(blueota_install_imgtool puts it in .build-imgtool) or set BLUEOTA_IMGTOOL")
  }

  /// Runs imgtool with `arguments` to its end.
  func run(_ arguments: [String]) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    // Standard error goes to a file: imgtool writes little there, but a pipe nobody reads can fill.
    let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
      "imgtool-\(UUID().uuidString).err")
    try Data().write(to: errorFile)
    defer { try? FileManager.default.removeItem(at: errorFile) }
    let errors = try FileHandle(forWritingTo: errorFile)
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try errors.close()
    return Result(
      status: process.terminationStatus, standardOutput: String(decoding: data, as: UTF8.self),
      standardError: String(decoding: try Data(contentsOf: errorFile), as: UTF8.self))
  }

  /// `imgtool dumpinfo -f json IMAGE`, decoded.
  func dumpinfo(_ image: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let result = try run(["dumpinfo", "-f", "json", image])
    #expect(
      result.succeeded, "imgtool dumpinfo \(image) failed:\n\(result.output)", sourceLocation: sourceLocation)
    let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
    return try #require(object as? [String: Any], sourceLocation: sourceLocation)
  }

  /// Runs imgtool and records an issue unless it succeeds.
  @discardableResult
  func expectSuccess(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws
    -> String
  {
    let result = try run(arguments)
    #expect(
      result.succeeded, "imgtool \(arguments.joined(separator: " ")) failed:\n\(result.output)",
      sourceLocation: sourceLocation)
    return result.output
  }
}
