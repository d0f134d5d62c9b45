import Foundation
import OTADaemon
import OTAFaults
import OTAReport
import OTAStorage
import OTASystem
import OTATrust
import OTAWire
import Synchronization

/// The simulated device: otad with file slots in the lab's folder, the simulated link on a Unix
/// socket, the sample firmware 1.0.0 in slot A, the test key trusted, the sample health check, two
/// trial boots: the demo's device. A power cut is SIGKILL and a new start on the same files. Under
/// `--bootloader uboot` the device has the U-Boot harness's board (`LabUBootBoard`): otad's U-Boot
/// backend writes the real environment, its restart and the power cut's power-on run U-Boot. Its
/// update locks are in the folder's `locks` (`--lock-dir`); the page may make it require consent.
final class LabDevice: Sendable {
  let paths: LabPaths
  let capacity: String
  let window: String
  /// The emulated board whose U-Boot decides the boots; nil: otad is its own bootloader (file links).
  let board: LabUBootBoard?
  /// What changed on the board, looked at every 50 ms (nil without a board).
  let watcher: LabUBootWatcher?
  private let process = Mutex<LabProcess?>(nil)
  private let starts = Mutex(0)
  /// otad's status, read in this process from the same files (as `otad status` does); made again
  /// when the device starts requiring consent or stops (the report weighs the kept activation).
  private let reader: Mutex<Daemon>
  private let configuration: DaemonConfiguration
  private let layout: DeviceLayout
  private let policy: ImagePolicy
  /// `otad run --require-consent`: the page's toggle; a new device (a reset) starts without it.
  private let consent = Mutex(false)

  init(paths: LabPaths, capacity: String, window: String) throws {
    self.paths = paths
    self.capacity = capacity
    self.window = window
    try FileSystem.writeFile(paths.slotA, FileSystem.readFile(paths.image("firmware-v1.bin")))
    var configuration = DaemonConfiguration()
    configuration.slotA = paths.slotA
    configuration.slotB = paths.slotB
    configuration.slotCapacity = try DaemonConfiguration.byteSize(capacity)
    configuration.stateDirectory = paths.state
    configuration.socket = paths.socket
    configuration.trust.keyFiles = [paths.trustedKey]
    configuration.lockDirectory = paths.lockDirectory
    if paths.bootloader == .uboot {
      let (scripts, qemu) = try LabUBootBoard.check(images: paths.images)
      board = LabUBootBoard(folder: paths.folder, scripts: scripts, qemu: qemu)
    } else {
      board = nil
    }
    let layout = try DeviceLayout(parsing: configuration)
    let policy = try configuration.trust.imagePolicy { path in
      (try? FileSystem.readFile(path)).flatMap { String(validating: $0, as: UTF8.self) }
    }
    try FileSystem.makeDirectories(paths.state)
    try FileSystem.makeDirectories(paths.lockDirectory)
    try Self.makeEncryptedImage(paths)
    // otad creates slot B at its first start; the status reader opens both.
    try FileSystem.writeFile(paths.slotB, [])
    watcher = board.map(LabUBootWatcher.init)
    if let board {
      try board.make()
      try FileSystem.writeFile(paths.otadConfiguration, Array(board.otadConfiguration.utf8))
      configuration.boot.backend = .uboot
      configuration.boot.ubootConfig = board.config
      configuration.boot.cmdline = board.cmdline
    }
    reader = Mutex(try Daemon(layout: layout, configuration: configuration, policy: policy))
    self.configuration = configuration
    self.layout = layout
    self.policy = policy
    watcher?.start()
  }

  var arguments: [String] {
    ["run"] + (board == nil ? [] : ["--config", paths.otadConfiguration]) + [
      "--slot-a", paths.slotA, "--slot-b", paths.slotB, "--capacity", capacity, "--state-dir",
      paths.state,
      "--socket", paths.socket, "--trusted-key", paths.trustedKey, "--health-check", paths.healthCheck,
      "--decryption-key", paths.deviceKey,
      "--attempts", "2", "--window", window, "--log-level", "info", "--trace", paths.deviceTrace,
      // The lab is a test device: its fault buttons set faults through otad's fault control.
      "--allow-faults", "--lock-dir", paths.lockDirectory,
    ] + (requiresConsent ? ["--require-consent"] : [])
  }

  var requiresConsent: Bool { consent.withLock { $0 } }

  /// Starts otad again with (or without) `--require-consent`, on the same files, as a power cut
  /// does: the setting is otad's own, read at its start.
  func requireConsent(_ required: Bool) throws {
    var changed = configuration
    changed.requireConsent = required
    let fresh = try Daemon(layout: layout, configuration: changed, policy: policy)
    consent.withLock { $0 = required }
    try powerCut(off: .milliseconds(100))
    // The status says so once otad runs with it.
    reader.withLock { $0 = fresh }
  }

  /// The device's key (mode 0600) and the encrypted image made for it: firmware 2.0.0's payload
  /// (its app and assets) as 2.1.0, signed with the test key, encrypted as `otactl image create
  /// --encrypt` does. Its payload is ciphertext in the file and on the air, plaintext in the slot.
  static func makeEncryptedImage(_ paths: LabPaths) throws {
    let keyText = try FileSystem.readFile(paths.image("keys/test-device-x25519.pem"))
    try FileSystem.writeFile(paths.deviceKey, keyText, mode: 0o600)
    let deviceKey = try ImageDecryptionKey(keyFile: String(decoding: keyText, as: UTF8.self))
    let signer = try ImageSigningKey(
      pem: String(decoding: try FileSystem.readFile(paths.image("keys/test-ed25519.pem")), as: UTF8.self))
    let v2 = try FileSystem.readFile(paths.image("firmware-v2.bin"))
    let layout = try MCUbootImageLayout(parsing: v2)
    let payload = Array(v2[Int(layout.payloadRange.lowerBound)..<Int(layout.payloadRange.upperBound)])
    let image = try MCUbootImageBuilder(
      version: Version(major: 2, minor: 1, revision: 0), headerSize: Int(layout.header.headerSize),
      encryptFor: deviceKey.encryptionKey
    ).build(payload: payload, signingKey: signer)
    try FileSystem.writeFile(paths.encryptedImage, image)
  }

  /// Starts otad and waits for its socket: up to 20 s, or under U-Boot 5 minutes (its boot stage may
  /// restart through U-Boot, a few seconds a boot under emulation, several boots for a hung trial).
  func start() throws {
    try? FileSystem.removeTree(paths.socket)
    let count = starts.withLock { value -> Int in
      value += 1
      return value
    }
    let child = try LabProcess(paths.otad, arguments, output: paths.folder + "/otad-\(count).log")
    process.withLock { $0 = child }
    let deadline = Date().addingTimeInterval(board == nil ? 20 : 300)
    while !FileSystem.exists(paths.socket), Date() < deadline, child.ended() == nil {
      usleep(20_000)
    }
    guard FileSystem.exists(paths.socket) else {
      throw LabError("otad did not start: see \(paths.folder)/otad-\(count).log")
    }
  }

  /// Power cut: SIGKILL (otad and its health check), nothing tidied; then, after `off`, power on:
  /// under U-Boot the board boots first (U-Boot chooses), then otad starts on the kernel it started.
  func powerCut(off: Duration = .milliseconds(500)) throws {
    process.withLock { $0 }?.kill()
    Thread.sleep(forTimeInterval: Double(off.components.seconds) + Double(off.components.attoseconds) / 1e18)
    try board?.powerOn()
    try start()
  }

  func stop() {
    process.withLock { $0 }?.kill()
    watcher?.stop()
  }

  /// A command to otad's fault control; its answer, or why it was refused.
  func faultControl(_ command: FaultControlCommand) throws -> String {
    let answer = try FaultControlClient.ask(command, stateDirectory: paths.state)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    guard !answer.hasPrefix("error:") else { throw LabError(String(answer.dropFirst(7))) }
    return answer
  }

  var running: Bool { process.withLock { $0 }?.ended() == nil }

  /// Starts of otad by the lab beyond the first (power cuts).
  var powerCuts: Int { max(0, starts.withLock { $0 } - 1) }

  /// otad's status without the running image's check: the page asks several times a second, and
  /// a check hashes the whole running slot (64 MiB after a large push).
  func status() throws -> DeviceStatusReport {
    try reader.withLock { $0 }.statusReport(checkingImage: false)
  }

  /// Flips one byte of the slot otad is not running, inside what the journal says is there: the
  /// next VALIDATE (or a trial's image check) must find it.
  func flipByte() throws -> String {
    let report = try status()
    let target = report.running == "A" ? paths.slotB : paths.slotA
    var size = 4096
    if case .journal(let journal) = report.transfer, journal.committed > 0 { size = Int(journal.committed) }
    let offset = UInt64(size / 2)
    let file = try FileDescriptor.open(target, .readWrite)
    defer { try? file.close() }
    let old = try file.read(at: offset, count: 1).first ?? 0
    try file.write([old ^ 0xFF], at: offset)
    return
      "flipped byte \(offset) of slot \(report.running == "A" ? "B" : "A") (0x\(String(old, radix: 16)) → 0x\(String(old ^ 0xFF, radix: 16)))"
  }
}
