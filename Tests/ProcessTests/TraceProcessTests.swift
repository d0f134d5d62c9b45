import Foundation
import OTATestSupport
import Testing

/// The demo's pushes with `--trace` on both sides: the files are checked against the Trace Event
/// Format itself (Perfetto's own checker fetches a binary at run time), not against our writer.
@Suite(.serialized) struct TraceProcessTests {
  static let root = RepositoryRoot.url

  static func sample(_ name: String) -> String { root.appendingPathComponent("Images/\(name)").path }

  @Test func theDemosPushesWriteTracesThatKeepTheFormat() throws {
    let factory = try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin")))
    let daemon = try Daemon(capacity: "64KiB", firmware: [UInt8](factory))
    let deviceTrace = daemon.folder.appendingPathComponent("otad-trace.json")
    try daemon.start(extra: [
      "--health-check", "sh " + Self.sample("firmware/health-check.sh"), "--attempts", "2", "--window",
      "8KiB",
      "--trusted-key", Self.sample("keys/test-ed25519.pub.pem"), "--trace", deviceTrace.path,
    ])
    // The demo's link, faster: 2% loss and one drop after 20000 bytes.
    let pushTrace = daemon.folder.appendingPathComponent("push-trace.json")
    let push = try runTool(
      "otactl",
      [
        "push", Self.sample("firmware-v2.bin"), "--device", daemon.socket, "--trace", pushTrace.path,
        "--link", "mtu=247,interval=2ms,packets=6,loss=0.02,disconnect-after=20000",
        // Whole: v2 is a sibling of v1, whose blocks the device would copy (under 20000 bytes on air).
        "--full",
      ])
    #expect(push.status == 0, "\(push.output)\n\(push.errors)\n\(daemon.log)")

    let central = try TraceFile(pushTrace)
    #expect(central.problems.isEmpty, "\(central.problems)")
    for phase in ["connect", "PREPARE", "transfer", "VALIDATE", "ACTIVATE", "VERIFY"] {
      #expect(central.slices(named: phase).count >= 1, "the push's \(phase)")
    }
    let windows = central.slices(named: "window")
    #expect(windows.count >= 3, "a slice per committed window")
    #expect(windows.allSatisfy { ($0["args"] as? [String: Any])?["crc"] is String })
    let covered = windows.reduce(0) { $0 + ((($1["args"] as? [String: Any])?["length"] as? Int) ?? 0) }
    let resumedAt = central.instants(named: "resume").compactMap {
      ($0["args"] as? [String: Any])?["offset"] as? Int
    }
    #expect(!resumedAt.isEmpty, "the drop after 20000 bytes is resumed: \(central.names)")
    #expect(central.instants(named: "reconnect").count >= 1)
    #expect(covered <= 41686 && covered > 0, "windows cover the image once: \(covered)")
    #expect(central.instants(named: "succeeded").count == 1)

    // v3 fails its self-test at both trial boots: the device's trace has the rollback.
    let v3 = try runTool(
      "otactl",
      ["push", Self.sample("firmware-v3.bin"), "--device", daemon.socket, "--link", "mtu=247,interval=2ms"])
    #expect(v3.status == 7, "\(v3.output)\n\(v3.errors)")
    _ = try daemon.waitForStatus {
      $0.lastOutcome.result == "rolled back"
    }
    // The daemon rewrites its trace at each step; give the last one a moment.
    var device = try TraceFile(deviceTrace)
    let deadline = Date().addingTimeInterval(10)
    while device.instants(named: "boot decision").count < 4, Date() < deadline {
      usleep(100_000)
      device = try TraceFile(deviceTrace)
    }
    #expect(device.problems.isEmpty, "\(device.problems)")
    for phase in ["PREPARE", "transfer", "VALIDATE", "ACTIVATE"] {
      #expect(device.slices(named: phase).count >= 2, "the device's \(phase), twice: \(device.names)")
    }
    let deviceWindows = device.slices(named: "window")
    #expect(deviceWindows.contains { ($0["args"] as? [String: Any])?["crc"] as? String == "ok" })
    #expect(device.instants(named: "disconnected").count >= 1)
    #expect(device.instants(named: "restart").count >= 3, "into v2, into v3, back from it")
    let rows = device.instants(named: "boot decision").compactMap {
      ($0["args"] as? [String: Any])?["row"] as? String
    }
    #expect(rows.contains("trial boot"), "\(rows)")
    #expect(rows.last == "confirmed slot runs", "back on the confirmed slot: \(rows)")
    let verdicts = device.instants(named: "trial verdict").compactMap {
      ($0["args"] as? [String: Any])?["verdict"] as? String
    }
    #expect(verdicts.contains { $0.contains("confirmed") }, "v2's trial: \(verdicts)")
    #expect(verdicts.contains { $0.contains("rolling back") }, "v3's second failed boot: \(verdicts)")
    #expect(device.instants(named: "health check").count >= 3)
    _ = daemon.stop()
  }
}

/// A trace file read with JSONSerialization and held to the Trace Event Format: an object with
/// `traceEvents`; every event has name, ph, ts, pid and tid; B and E balanced and slices (B/E and X)
/// nested per thread; X has a duration; metadata names processes and threads.
struct TraceFile {
  let events: [[String: Any]]
  private(set) var problems: [String] = []

  init(_ url: URL) throws {
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
    guard let document = object as? [String: Any], let events = document["traceEvents"] as? [[String: Any]]
    else {
      throw DaemonError("\(url.lastPathComponent): not an object with traceEvents")
    }
    self.events = events
    problems = Self.check(events)
  }

  var names: [String] { events.compactMap { $0["name"] as? String } }

  func slices(named name: String) -> [[String: Any]] {
    events.filter { $0["name"] as? String == name && $0["ph"] as? String == "X" }
  }

  func instants(named name: String) -> [[String: Any]] {
    events.filter { $0["name"] as? String == name && $0["ph"] as? String == "i" }
  }

  static func check(_ events: [[String: Any]]) -> [String] {
    var problems: [String] = []
    let phases: Set<String> = ["B", "E", "X", "i", "M"]
    // Per (pid, tid): the slices as intervals, to check nesting, and the B stack.
    var intervals: [String: [(start: Double, end: Double, name: String)]] = [:]
    var stacks: [String: [(name: String, start: Double)]] = [:]
    var named: Set<String> = []
    for (index, event) in events.enumerated() {
      guard let name = event["name"] as? String, let ph = event["ph"] as? String,
        let ts = event["ts"] as? Double,
        let pid = event["pid"] as? Int, let tid = event["tid"] as? Int
      else {
        problems.append("event \(index) lacks name, ph, ts, pid or tid: \(event)")
        continue
      }
      guard phases.contains(ph) else {
        problems.append("event \(index): unknown ph \(ph)")
        continue
      }
      let track = "\(pid)/\(tid)"
      switch ph {
      case "M":
        guard ["process_name", "thread_name"].contains(name),
          (event["args"] as? [String: Any])?["name"] is String
        else {
          problems.append("metadata \(index) names nothing: \(event)")
          break
        }
        named.insert(name == "process_name" ? "\(pid)" : track)
      case "B":
        stacks[track, default: []].append((name, ts))
      case "E":
        guard let open = stacks[track]?.popLast() else {
          problems.append("E \(index) on \(track) ends nothing")
          break
        }
        guard ts >= open.start else {
          problems.append("E \(index) of \(open.name) before its B")
          break
        }
        intervals[track, default: []].append((open.start, ts, open.name))
      case "X":
        guard let duration = event["dur"] as? Double, duration >= 0 else {
          problems.append("X \(index) (\(name)) has no duration")
          break
        }
        intervals[track, default: []].append((ts, ts + duration, name))
      default:
        break
      }
    }
    for (track, open) in stacks where !open.isEmpty {
      problems.append("\(track): \(open.map(\.name)) begun and never ended")
    }
    // Slices on one thread nest: any two are disjoint or one holds the other.
    for (track, slices) in intervals {
      let sorted = slices.sorted { $0.start != $1.start ? $0.start < $1.start : $0.end > $1.end }
      var enclosing: [(start: Double, end: Double, name: String)] = []
      for slice in sorted {
        while let last = enclosing.last, last.end <= slice.start { enclosing.removeLast() }
        if let last = enclosing.last, slice.end > last.end {
          problems.append("\(track): \(slice.name) overlaps \(last.name) without nesting")
        }
        enclosing.append(slice)
      }
      if !named.contains(track) { problems.append("\(track) has no thread_name") }
    }
    return problems
  }
}
