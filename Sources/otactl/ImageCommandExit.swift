import ArgumentParser
import Foundation
import OTACentral

/// The one way an `otactl image …` failure ends: one line on standard error, then its exit status
/// (`OtactlExitCode`, shared by every otactl command).
enum ImageCommandExit {
  /// Prints `otactl image <command>: <message>` on standard error; throw what it returns.
  static func fail(_ command: String, _ message: String, _ status: OtactlExitCode) -> ExitCode {
    FileHandle.standardError.write(Data("otactl image \(command): \(message)\n".utf8))
    return ExitCode(status.rawValue)
  }
}
