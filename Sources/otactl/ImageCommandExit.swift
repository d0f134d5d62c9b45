import ArgumentParser
import Foundation

/// The exit codes of `otactl image …` (listed in `ImageCommand`'s help), and the one way a failure
/// ends: one line on standard error, then the code.
enum ImageCommandExit: Int32 {
  case cannotWrite = 1
  case badImage = 10
  case hashMismatch = 11
  case signatureRejected = 12
  case usage = 64

  /// Prints `otactl image <command>: <message>` on standard error; throw what it returns.
  static func fail(_ command: String, _ message: String, _ code: Self) -> ExitCode {
    FileHandle.standardError.write(Data("otactl image \(command): \(message)\n".utf8))
    return ExitCode(code.rawValue)
  }
}
