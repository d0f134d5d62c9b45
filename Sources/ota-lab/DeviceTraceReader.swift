import Foundation
import OTALab

/// otad's own trace (`otad run --trace`), read back as the lab's device events: parsed again only
/// when the file changed (at most once a second), and only what the page draws kept
/// (`DeviceEventDigest`).
struct DeviceTraceReader {
  let path: String
  private var stamp: (Date, Int)?
  private var parsed: Date?
  /// At most one parse a second: otad's trace is megabytes during a long push, and the committed
  /// offset the page draws comes from the status report anyway.
  static let interval: TimeInterval = 1
  private(set) var digest = DeviceEventDigest()

  init(path: String) { self.path = path }

  mutating func refresh() {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
      let modified = attributes[.modificationDate] as? Date, let size = attributes[.size] as? Int
    else { return }
    if let stamp, stamp.0 == modified, stamp.1 == size { return }
    if let parsed, Date().timeIntervalSince(parsed) < Self.interval { return }
    parsed = Date()
    guard let data = FileManager.default.contents(atPath: path),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let list = object["traceEvents"] as? [[String: Any]]
    else { return }
    stamp = (modified, size)
    digest = DeviceEventDigest(list.compactMap(Self.event))
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
