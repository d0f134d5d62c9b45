import Foundation
import OTALab

/// otad's own trace (`otad run --trace`), read back as the lab's device events: parsed again only
/// when the file changed, and only the last `limit` events kept.
struct DeviceTraceReader {
  let path: String
  let limit: Int
  private var stamp: (Date, Int)?
  private(set) var events: [DeviceEvent] = []

  init(path: String, limit: Int = 20_000) {
    self.path = path
    self.limit = limit
  }

  mutating func refresh() {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
      let modified = attributes[.modificationDate] as? Date, let size = attributes[.size] as? Int
    else { return }
    if let stamp, stamp.0 == modified, stamp.1 == size { return }
    guard let data = FileManager.default.contents(atPath: path),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let list = object["traceEvents"] as? [[String: Any]]
    else { return }
    stamp = (modified, size)
    events = list.suffix(limit).compactMap(Self.event)
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
