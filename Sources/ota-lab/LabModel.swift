import Foundation
import OTALab
import OTAReport
import Synchronization

/// The lab's one device and its central, the link's settings, and the snapshot the page asks for:
/// built at most every `refresh` (coalesced: any number of pages polling cost the same), from
/// otad's status, otad's trace and otactl's lines.
final class LabModel: Sendable {
  struct Settings {
    // Slower than the demo's link on purpose: the sample firmware takes seconds, window by window.
    var mtu = 247
    var intervalMilliseconds = 30.0
    var packets = 2
    var loss = 0.0
    var conditions: String {
      "mtu=\(mtu),interval=\(Int(intervalMilliseconds))ms,packets=\(packets)"
        + (loss > 0 ? ",loss=\(loss)" : "")
    }
  }

  struct Cache {
    var built: ContinuousClock.Instant?
    var json = Data()
    var trace: DeviceTraceReader
  }

  let device: LabDevice
  let central: LabCentral
  let windowCapacity: Int
  let refresh: Duration
  private let settings = Mutex(Settings())
  private let actions = Mutex<[String]>([])
  private let cache: Mutex<Cache>
  private let started = ContinuousClock.now
  private let startedWall = UInt64(Date().timeIntervalSince1970 * 1_000_000)

  init(device: LabDevice, central: LabCentral, windowCapacity: Int, refresh: Duration = .milliseconds(200)) {
    self.device = device
    self.central = central
    self.windowCapacity = windowCapacity
    self.refresh = refresh
    cache = Mutex(Cache(trace: DeviceTraceReader(path: device.paths.deviceTrace)))
  }

  var link: Settings { settings.withLock { $0 } }

  func setLoss(_ loss: Double) { settings.withLock { $0.loss = loss } }

  func setLink(intervalMilliseconds: Double, packets: Int) {
    settings.withLock {
      $0.intervalMilliseconds = intervalMilliseconds
      $0.packets = packets
    }
  }

  func note(_ action: String) {
    let seconds = (ContinuousClock.now - started).components.seconds
    actions.withLock {
      $0.append("\(seconds) s: \(action)")
      if $0.count > 30 { $0.removeFirst($0.count - 30) }
    }
  }

  /// The encrypted sample's first payload bytes in its file and in the slot that holds it (the one
  /// whose version is 2.1.0), or nil while no slot does.
  func encryption(_ status: DeviceStatusReport?) -> LabSnapshot.Encryption? {
    // Built up to five times a second: only the header's two bytes and the sixteen are read.
    guard let slot = status?.slots.first(where: { $0.version == "2.1.0+0" }),
      let header = Self.bytes(device.paths.encryptedImage, at: 8, count: 2)
    else { return nil }
    // The payload starts after the header: hdr_size, a little-endian u16 at offset 8.
    let start = UInt64(header[0]) | UInt64(header[1]) << 8
    guard let onAir = Self.bytes(device.paths.encryptedImage, at: start, count: 16),
      let inSlot = Self.bytes(slot.path, at: start, count: 16)
    else { return nil }
    return LabSnapshot.Encryption(slot: slot.slot, onAir: onAir, inSlot: inSlot)
  }

  /// Exactly `count` bytes of the file at `path` from `offset`; nil when they are not there.
  static func bytes(_ path: String, at offset: UInt64, count: Int) -> [UInt8]? {
    guard let file = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? file.close() }
    guard (try? file.seek(toOffset: offset)) != nil, let data = try? file.read(upToCount: count),
      data.count == count
    else { return nil }
    return Array(data)
  }

  /// The state as JSON, at most `refresh` old.
  func snapshotJSON() -> Data {
    cache.withLock { cache in
      let now = ContinuousClock.now
      if let built = cache.built, now - built < refresh { return cache.json }
      cache.trace.refresh()
      var status: DeviceStatusReport?
      var statusError: String?
      do { status = try device.status() } catch { statusError = "\(error)" }
      let link = self.link
      let snapshot = LabSnapshot(
        at: Double((now - started).components.seconds) + Double((now - started).components.attoseconds)
          / 1e18,
        startedAt: startedWall, otadRunning: device.running, powerCuts: device.powerCuts, status: status,
        statusError: statusError, deviceEvents: cache.trace.digest, push: central.progress(),
        link: LabSnapshot.Link(
          mtu: link.mtu, intervalMilliseconds: link.intervalMilliseconds, loss: link.loss,
          conditions: link.conditions),
        windowCapacity: windowCapacity, actions: actions.withLock { $0 },
        encryption: encryption(status))
      cache.json = (try? JSONEncoder().encode(snapshot)) ?? Data("{}".utf8)
      cache.built = now
      return cache.json
    }
  }
}
