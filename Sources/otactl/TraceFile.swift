import Foundation
import OTACentral

/// `otactl push --trace FILE`: the push's trace, written when the push ends (or fails).
final class TraceFile {
  let path: String
  var trace: PushTrace

  init(path: String, trace: PushTrace) {
    self.path = path
    self.trace = trace
  }

  /// Wall-clock microseconds: the same time base as otad's trace, so that both open side by side.
  static var now: UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000)) }

  func write() {
    do {
      try Data(trace.document().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      FileHandle.standardError.write(Data("otactl: cannot write the trace \(path): \(error)\n".utf8))
    }
  }
}
