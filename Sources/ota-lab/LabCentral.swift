import Foundation
import OTALab
import OTAReport
import OTASystem
import Synchronization

/// The central: one `otactl push --json` at a time against the lab's device, its lines read back
/// from the file it writes. Dropping the link kills otactl and starts it again: the device sees the
/// link go, the new connection resumes from the committed offset. A new loss does the same.
final class LabCentral: Sendable {
  struct Push {
    var label: String
    var arguments: [String]
    var process: LabProcess
    var output: String
    var read: UInt64 = 0
    var partial = ""
    var progress: PushProgress
    /// Which push this is (1 for the first): tells one push's end from the next's.
    var serial: Int
  }

  let paths: LabPaths
  private let push = Mutex<Push?>(nil)
  private let count = Mutex(0)
  private let pushes = Mutex(0)

  init(paths: LabPaths) { self.paths = paths }

  var running: Bool { push.withLock { $0?.process.ended() == nil && $0 != nil } }

  /// Starts a push of `image` (a sample's name, or an absolute path) over `link`; refused while one runs.
  /// `extra`: otactl's further arguments (`--full`, `--base FILE`).
  func start(label: String, image: String, link: String, extra: [String] = []) throws {
    if running { throw LabError("a push is under way: wait for it, drop the link or cut the power") }
    let arguments =
      [
        "push", image.hasPrefix("/") ? image : paths.image(image), "--device", paths.socket, "--json",
        "--link",
        link, "--max-reconnects",
        "20",
      ] + extra
    let serial = pushes.withLock { value -> Int in
      value += 1
      return value
    }
    let output = nextOutput()
    let process = try LabProcess(paths.otactl, arguments, output: output)
    push.withLock {
      $0 = Push(
        label: label, arguments: arguments, process: process, output: output,
        progress: PushProgress(label: label), serial: serial)
    }
  }

  /// Kills otactl mid-push and starts it again (with `link`, when given): a dropped link, resumed.
  /// All under the lock: a look at the push in between would see otactl killed and call the push
  /// failed.
  func restart(link: String? = nil) throws -> Bool {
    try push.withLock { current throws -> Bool in
      guard var value = current, value.process.ended() == nil else { return false }
      value.process.kill()
      drain(&value)
      if let link, let index = value.arguments.firstIndex(of: "--link") {
        value.arguments[index + 1] = link
      }
      value.output = nextOutput()
      value.read = 0
      value.partial = ""
      value.progress.restarted()
      value.process = try LabProcess(paths.otactl, value.arguments, output: value.output)
      current = value
      return true
    }
  }

  /// The push as far as otactl has told, reading what it wrote since the last look, and its serial
  /// (0: none yet).
  func progress() -> (serial: Int, progress: PushProgress?) {
    push.withLock { current -> (serial: Int, progress: PushProgress?) in
      guard var value = current else { return (0, nil) }
      let ended = value.process.ended()
      drain(&value)
      if let ended, value.progress.result == nil {
        // Killed, or ended without a result line: say so rather than wait for one.
        value.progress.apply(.result(ok: false, exitCode: -1, error: "otactl ended: \(ended)", seconds: 0))
      }
      current = value
      return (value.serial, value.progress)
    }
  }

  func stop() { push.withLock { $0 }?.process.kill() }

  private func nextOutput() -> String {
    let number = count.withLock { value -> Int in
      value += 1
      return value
    }
    return paths.folder + "/otactl-\(number).jsonl"
  }

  /// Reads otactl's new output and applies its whole lines.
  private func drain(_ push: inout Push) {
    guard let file = try? FileDescriptor.open(push.output, .readOnly) else { return }
    defer { try? file.close() }
    let size = (try? file.status().size) ?? push.read
    let count = Int(min(size - min(size, push.read), UInt64(Int.max)))
    let bytes = (try? file.read(at: push.read, count: count)) ?? []
    push.read += UInt64(bytes.count)
    var text = push.partial + String(decoding: bytes, as: UTF8.self)
    guard let lastNewline = text.lastIndex(of: "\n") else {
      push.partial = text
      return
    }
    push.partial = String(text[text.index(after: lastNewline)...])
    text = String(text[..<lastNewline])
    for line in text.split(separator: "\n") {
      if let parsed = Self.parse(String(line)) { push.progress.apply(parsed) }
    }
  }

  /// One line of otactl's `--json` output as the page's push line; nil for anything else (a log
  /// line, a line cut short).
  static func parse(_ line: String) -> PushLine? {
    guard line.hasPrefix("{"), let report = try? JSONDecoder().decode(PushReport.self, from: Data(line.utf8))
    else { return nil }
    switch report {
    case .start(let start):
      return .start(image: start.image, size: start.size, version: start.version, link: start.link)
    case .phase(let phase): return .phase(phase.phase, t: phase.t)
    case .progress(let progress):
      return .progress(
        committed: progress.committed, total: progress.total, bytesOnAir: progress.bytesOnAir, t: progress.t)
    case .resume(let resume): return .resume(offset: resume.offset)
    case .succeeded(let result):
      return .result(
        ok: true, exitCode: 0, error: nil, seconds: result.seconds,
        air: PushLine.Air(
          bytesOnAir: result.bytesOnAir, transferMode: result.transferMode,
          plainBytesOnAir: result.plainBytesOnAir))
    case .failed(let result):
      return .result(ok: false, exitCode: result.exitCode, error: result.error, seconds: result.seconds)
    }
  }
}
