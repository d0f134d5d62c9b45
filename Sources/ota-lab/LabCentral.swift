import Foundation
import OTALab
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
  }

  let paths: LabPaths
  private let push = Mutex<Push?>(nil)
  private let count = Mutex(0)

  init(paths: LabPaths) { self.paths = paths }

  var running: Bool { push.withLock { $0?.process.ended() == nil && $0 != nil } }

  /// Starts a push of `image` (a sample's name, or an absolute path) over `link`; refused while one runs.
  func start(label: String, image: String, link: String) throws {
    if running { throw LabError("a push is under way: wait for it, drop the link or cut the power") }
    let arguments = [
      "push", image.hasPrefix("/") ? image : paths.image(image), "--device", paths.socket, "--json", "--link",
      link, "--max-reconnects",
      "20",
    ]
    let output = nextOutput()
    let process = try LabProcess(paths.otactl, arguments, output: output)
    push.withLock {
      $0 = Push(
        label: label, arguments: arguments, process: process, output: output,
        progress: PushProgress(label: label))
    }
  }

  /// Kills otactl mid-push and starts it again (with `link`, when given): a dropped link, resumed.
  func restart(link: String? = nil) throws -> Bool {
    guard var current = push.withLock({ $0 }), current.process.ended() == nil else { return false }
    current.process.kill()
    drain(&current)
    if let link, let index = current.arguments.firstIndex(of: "--link") {
      current.arguments[index + 1] = link
    }
    current.output = nextOutput()
    current.read = 0
    current.partial = ""
    current.progress.restarted()
    current.process = try LabProcess(paths.otactl, current.arguments, output: current.output)
    let updated = current
    push.withLock { $0 = updated }
    return true
  }

  /// The push as far as otactl has told, reading what it wrote since the last look.
  func progress() -> PushProgress? {
    push.withLock { current -> PushProgress? in
      guard var value = current else { return nil }
      let ended = value.process.ended()
      drain(&value)
      if let ended, value.progress.result == nil {
        // Killed, or ended without a result line: say so rather than wait for one.
        value.progress.apply(.result(ok: false, exitCode: -1, error: "otactl ended: \(ended)", seconds: 0))
      }
      current = value
      return value.progress
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
    guard let handle = FileHandle(forReadingAtPath: push.output) else { return }
    defer { try? handle.close() }
    try? handle.seek(toOffset: push.read)
    let data = (try? handle.readToEnd()) ?? Data()
    push.read += UInt64(data.count)
    var text = push.partial + String(decoding: data, as: UTF8.self)
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

  static func parse(_ line: String) -> PushLine? {
    guard line.hasPrefix("{"),
      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
      let event = object["event"] as? String
    else { return nil }
    let number = { (key: String) -> Double in (object[key] as? NSNumber)?.doubleValue ?? 0 }
    switch event {
    case "start":
      return .start(
        image: object["image"] as? String ?? "", size: Int(number("size")),
        version: object["version"] as? String ?? "",
        link: object["link"] as? String ?? "")
    case "phase": return .phase(object["phase"] as? String ?? "", t: number("t"))
    case "progress":
      return .progress(
        committed: Int(number("committed")), total: Int(number("total")),
        bytesOnAir: Int(number("bytesOnAir")),
        t: number("t"))
    case "resume": return .resume(offset: Int(number("offset")))
    case "result":
      let ok = object["ok"] as? Bool ?? false
      return .result(
        ok: ok, exitCode: ok ? 0 : Int(number("exitCode")), error: object["error"] as? String,
        seconds: number("seconds"))
    default: return nil
    }
  }
}
