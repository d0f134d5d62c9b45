import Foundation
import OTADaemon
import OTALab
import OTAReport
import OTASystem
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

  /// The device and its central: made again, from nothing, by a reset.
  struct Rig {
    var device: LabDevice
    var central: LabCentral
  }

  /// What the exercises remember beyond otad's status: those done, and what was pressed during
  /// the push under way.
  struct Progress {
    var done: Set<Int> = []
    var recordedPush = 0
    var powerCutDuringPush = false
    var flippedDuringPush = false
    var faultSet = false
    /// Exercise 10's steps as the device showed them.
    var say = SayExercise()
  }

  let options: LabRigOptions
  let windowCapacity: Int
  let refresh: Duration
  /// The student's name in class mode; nil for the lab alone.
  let seat: String?
  private let rig: Mutex<Rig>
  private let settings = Mutex(Settings())
  private let actions = Mutex<[String]>([])
  private let cache: Mutex<Cache>
  private let progress = Mutex(Progress())
  /// Serializes resets with each other.
  private let resetting = Mutex(false)
  /// What the page says while a reset runs (the snapshot still shows the old device until then).
  private let resetUnderWay = Mutex<String?>(nil)
  private let started = ContinuousClock.now
  private let startedWall = UInt64(Date().timeIntervalSince1970 * 1_000_000)

  /// Makes the device (not started: `start()`).
  init(options: LabRigOptions, seat: String? = nil, refresh: Duration = .milliseconds(200)) throws {
    self.options = options
    self.seat = seat
    self.refresh = refresh
    windowCapacity = Int(try DaemonConfiguration.byteSize(options.window))
    let rig = try Self.makeRig(options)
    self.rig = Mutex(rig)
    cache = Mutex(Cache(trace: DeviceTraceReader(path: rig.device.paths.deviceTrace)))
    setLink(intervalMilliseconds: max(1, options.intervalMilliseconds), packets: max(1, options.packets))
  }

  static func makeRig(_ options: LabRigOptions) throws -> Rig {
    let paths = try LabPaths.make(images: options.images, bin: options.bin, bootloader: options.bootloader)
    let device: LabDevice
    do {
      device = try LabDevice(paths: paths, capacity: options.capacity, window: options.window)
    } catch {
      if !options.keep { try? FileSystem.removeTree(paths.folder) }
      throw error
    }
    return Rig(device: device, central: LabCentral(paths: paths))
  }

  var device: LabDevice { rig.withLock { $0.device } }
  var central: LabCentral { rig.withLock { $0.central } }

  func start() throws { try device.start() }

  /// Stops the push and otad, and removes the device's folder (unless --keep).
  func stop() {
    let current = rig.withLock { $0 }
    current.central.stop()
    current.device.stop()
    if !options.keep { try? FileSystem.removeTree(current.device.paths.folder) }
  }

  /// The device back to the start: the push and otad stopped, a new folder with 1.0.0 in slot A,
  /// slot B empty, a fresh journal and boot state, otad started on it; the old folder removed. The
  /// link's settings and the exercises done stay.
  func reset() throws {
    try resetting.withLock { _ in
      resetUnderWay.withLock {
        $0 =
          options.bootloader == .uboot
          ? "resetting: a new board, U-Boot's first boot on its defaults…" : "resetting the device…"
      }
      defer { resetUnderWay.withLock { $0 = nil } }
      let fresh = try Self.makeRig(options)
      let old = rig.withLock { $0 }
      old.central.stop()
      old.device.stop()
      do { try fresh.device.start() } catch {
        // The new folder goes; the old device stays stopped, and the page says why (reset again).
        fresh.device.stop()
        if !options.keep { try? FileSystem.removeTree(fresh.device.paths.folder) }
        throw error
      }
      rig.withLock { $0 = fresh }
      cache.withLock {
        $0.trace = DeviceTraceReader(path: fresh.device.paths.deviceTrace)
        $0.built = nil
      }
      progress.withLock {
        // The new central counts its pushes from 1 again.
        $0.recordedPush = 0
        $0.powerCutDuringPush = false
        $0.flippedDuringPush = false
        $0.faultSet = false
        // The new device requires no consent and holds no lock: exercise 10 starts again.
        $0.say = SayExercise()
      }
      if !options.keep { try? FileSystem.removeTree(old.device.paths.folder) }
    }
  }

  /// A push starts: what was pressed during the last one is forgotten.
  func pushStarted() {
    progress.withLock {
      $0.powerCutDuringPush = false
      $0.flippedDuringPush = false
    }
  }

  func poweredCut(duringPush: Bool) { if duringPush { progress.withLock { $0.powerCutDuringPush = true } } }
  func flipped(duringPush: Bool) { if duringPush { progress.withLock { $0.flippedDuringPush = true } } }
  func faults(set: Bool) { progress.withLock { $0.faultSet = set } }

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
      let (serial, push) = central.progress()
      var snapshot = LabSnapshot(
        at: Double((now - started).components.seconds) + Double((now - started).components.attoseconds)
          / 1e18,
        startedAt: startedWall, otadRunning: device.running, powerCuts: device.powerCuts, status: status,
        statusError: statusError, deviceEvents: cache.trace.digest, push: push,
        link: LabSnapshot.Link(
          mtu: link.mtu, intervalMilliseconds: link.intervalMilliseconds, loss: link.loss,
          conditions: link.conditions),
        windowCapacity: windowCapacity, actions: actions.withLock { $0 },
        encryption: encryption(status))
      snapshot.exercises = exercises(status: status, say: snapshot.say, serial: serial, push: push)
      snapshot.seat = seat
      snapshot.resetting = resetUnderWay.withLock { $0 }
      snapshot.bootVariables = device.bootPointer(otad: snapshot.boot)
      cache.json = (try? JSONEncoder().encode(snapshot)) ?? Data("{}".utf8)
      cache.built = now
      return cache.json
    }
  }

  /// The exercises' states; a push that ended since the last look marks those it completed.
  private func exercises(status: DeviceStatusReport?, say: DeviceSay?, serial: Int, push: PushProgress?)
    -> [LabExercise]
  {
    progress.withLock { progress in
      if let push, let result = push.result, serial > progress.recordedPush {
        progress.recordedPush = serial
        let label = push.label
        for number in LabExercise.completed(
          label: label, exitCode: result.exitCode,
          resumedAfterPowerCut: progress.powerCutDuringPush && !push.resumes.isEmpty,
          flipped: progress.flippedDuringPush, faultSet: progress.faultSet)
        {
          progress.done.insert(number)
        }
      }
      let running = status.flatMap { report in report.slots.first { $0.running }?.version }
      progress.say.observe(say, running: running, onTrial: status?.trial != nil)
      if progress.say.done { progress.done.insert(SayExercise.number) }
      let device = LabExercise.Device(
        running: device.running ? running : nil, onTrial: status?.trial != nil,
        pushing: push.flatMap { $0.running ? $0.label : nil }, sayUnderWay: progress.say.underWay)
      return LabExercise.list(device, done: progress.done)
    }
  }
}
