import Foundation
import OTALab
import OTASystem

/// otad's own trace (`otad run --trace`), read back as the lab's device events: parsed again only
/// when the file changed (at most once a second), line by line, and only what the page draws kept
/// (`DeviceEventDigest`).
struct DeviceTraceReader {
  let path: String
  private var stamp: (Int64, UInt64)?
  private var parsed: Date?
  /// At most one parse a second: otad's trace is megabytes during a long push, and the committed
  /// offset the page draws comes from the status report anyway.
  static let interval: TimeInterval = 1
  private(set) var digest = DeviceEventDigest()

  init(path: String) { self.path = path }

  mutating func refresh() {
    guard let status = (try? FileSystem.status(ofPath: path)) ?? nil else { return }
    let (modified, size) = (status.modified, status.size)
    if let stamp, stamp.0 == modified, stamp.1 == size { return }
    if let parsed, Date().timeIntervalSince(parsed) < Self.interval { return }
    parsed = Date()
    guard let bytes = try? FileSystem.readFile(path) else { return }
    stamp = (modified, size)
    digest = DeviceEventDigest(Self.events(String(decoding: bytes, as: UTF8.self)))
  }

  /// The events of a trace otad wrote (one per line), parsed only where the digest needs them: the
  /// recent ones whole; before them a window checked ok is only counted (thousands in a long
  /// push), and only failed windows, PREPARE and boot decisions are parsed. Memory stays that of
  /// the file's text, not of a parsed document.
  static func events(_ text: String) -> [DeviceEvent] {
    let lines = text.split(separator: "\n").filter { $0.hasPrefix("{\"name\":") }
    let recent = max(0, lines.count - DeviceEventDigest.recent)
    var events: [DeviceEvent] = []
    for (index, line) in lines.enumerated() {
      if index < recent {
        if line.hasPrefix("{\"name\":\"window\""), line.contains("\"crc\":\"ok\"") {
          events.append(DeviceEvent(name: "window", time: 0, args: ["crc": "ok"]))
          continue
        }
        let needed = ["window", "PREPARE", "boot decision"].contains { line.hasPrefix("{\"name\":\"\($0)\"") }
        guard needed else { continue }
      }
      let body = line.hasSuffix(",") ? line.dropLast() : line[...]
      guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
        let event = event(object)
      else { continue }
      events.append(event)
    }
    return events
  }

  static func event(_ object: [String: Any]) -> DeviceEvent? {
    guard let name = object["name"] as? String, let phase = object["ph"] as? String,
      phase == "X" || phase == "i",
      let time = (object["ts"] as? NSNumber)?.uint64Value
    else { return nil }
    var args: [String: String] = [:]
    for (key, value) in object["args"] as? [String: Any] ?? [:] {
      args[key] = "\(value)"
    }
    return DeviceEvent(
      name: name, time: time, duration: (object["dur"] as? NSNumber)?.uint64Value ?? 0, args: args)
  }
}
