import Foundation
import Testing

/// A device whose storage fails, seen from outside: otactl blames the storage (exit 13), not the
/// link, and otad's log names the operation, the path and the system's reason.
@Suite(.serialized) struct StorageErrorProcessTests {
  static let firmware = testBytes(5000, seed: 31)
  static let link = "mtu=247,interval=2ms,packets=8"

  func image(_ count: Int, in daemon: Daemon) throws -> String {
    let url = daemon.folder.appendingPathComponent("image.bin")
    try Data(testBytes(count, seed: 32)).write(to: url)
    return url.path
  }

  /// Slot B as large as its capacity already, so PREPARE's sizing does not grow it.
  func presize(_ url: URL, to size: UInt64) throws {
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    let handle = try FileHandle(forWritingTo: url)
    try handle.truncate(atOffset: size)
    try handle.close()
  }

  /// The slot's file system takes no more past 256 KiB (RLIMIT_FSIZE: a real EFBIG from the
  /// kernel): every WINDOW past it fails as a storage error, never as "missing data".
  @Test func writesPastAFullSlotAreAStorageErrorNotTheLink() throws {
    // [P-STOR-2] [SEC-ATK-41]
    let daemon = try Daemon(firmware: Self.firmware)
    try presize(daemon.slotB, to: 2 << 20)
    try daemon.start(extra: ["--log-level", "info"], fileSizeLimit: 512)
    let push = try runTool(
      "otactl",
      [
        "push", try image(1 << 20, in: daemon), "--version", "1.1.0", "--device", daemon.socket, "--link",
        Self.link,
      ])
    #expect(push.status == 13, "\(push.errors)")
    #expect(push.errors.contains("storage is full or failing"), "\(push.errors)")
    #expect(!push.errors.contains("Move closer") && !push.errors.contains("missing data"), "\(push.errors)")
    let log = daemon.log
    #expect(log.contains("pwrite \(daemon.slotB.path): File too large (errno 27)"), "\(log)")
    #expect(log.contains("raise it or use another path"), "the log says what to do")
    // What was written before the limit stays committed, and the device still serves.
    let info = try runTool("otactl", ["info", "--device", daemon.socket, "--json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(info.output.utf8)) as? [String: Any])
    let committed = try #require((object["transfer"] as? [String: Any])?["committed"] as? Int)
    #expect(committed > 0 && committed <= 512 * 1024, "\(object)")
    #expect(object["runningVersion"] as? String == "1.0.0+0")
  }

  /// PREPARE cannot size the slot (past the same limit): the device answers "storage error" each time
  /// it is asked, and otactl says the storage failed, with PREPARE named.
  @Test func aPrepareTheStorageCannotHoldSaysStorage() throws {
    // [SEC-ATK-41]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start(extra: ["--log-level", "info"], fileSizeLimit: 512)
    let push = try runTool(
      "otactl",
      [
        "push", try image(4096, in: daemon), "--version", "1.1.0", "--device", daemon.socket, "--link",
        Self.link,
      ])
    #expect(push.status == 13, "\(push.errors)")
    #expect(
      push.errors.contains("could not carry out PREPARE: its storage is full or failing"), "\(push.errors)")
    #expect(daemon.log.contains("ftruncate \(daemon.slotB.path): File too large"), "\(daemon.log)")
  }

  /// The state directory is a file, or sits under one: refused with the path and what to do.
  @Test func aStateDirectoryThatIsAFileIsRefusedWithTheReason() throws {
    // [SEC-ATK-42]
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "otad-state-\(UUID().uuidString)")
    try Data("not a directory".utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let daemon = try Daemon(firmware: Self.firmware, stateDirectory: file)
    let refused = try runTool("otad", ["run"] + daemon.baseArguments)
    #expect(refused.status == 64, "\(refused.errors)")
    #expect(refused.errors.contains("\(file.path) is not a directory: remove that file"), "\(refused.errors)")

    let under = try Daemon(firmware: Self.firmware, stateDirectory: file.appendingPathComponent("state"))
    let failed = try runTool("otad", ["run"] + under.baseArguments)
    #expect(failed.status == 74, "\(failed.errors)")
    #expect(
      failed.errors.contains("\(file.path)/state: Not a directory (errno 20)")
        && failed.errors.contains("is a file, not a directory"), "\(failed.errors)")
    #expect(!failed.errors.contains("system(operation"), "no Swift enum dump")
  }

  /// A read-only state directory (a real read-only mount) stops otad at start, not at the first PREPARE.
  @Test(.enabled(if: SmallFileSystem.isAvailable, "needs root: mount -t tmpfs"))
  func aReadOnlyStateDirectoryStopsOtadAtStart() throws {
    // [SEC-ATK-42]
    let mount = try SmallFileSystem(options: "ro,size=64k")
    let daemon = try Daemon(firmware: Self.firmware, stateDirectory: mount.path)
    let failed = try runTool("otad", ["run"] + daemon.baseArguments)
    #expect(failed.status == 74, "\(failed.errors)")
    #expect(failed.errors.contains("Read-only file system (errno 30)"), "\(failed.errors)")
    #expect(failed.errors.contains("mount it read-write"), "\(failed.errors)")
    #expect(!FileManager.default.fileExists(atPath: daemon.socket), "it never served")
  }

  /// The state directory fills up (a real 64 KiB tmpfs): the journal cannot be written, PREPARE is
  /// answered "storage error", otad logs the write and its path, otactl blames the storage.
  @Test(.enabled(if: SmallFileSystem.isAvailable, "needs root: mount -t tmpfs"))
  func aFullStateDirectoryIsAStorageError() throws {
    // [SEC-ATK-42]
    let mount = try SmallFileSystem(options: "size=64k")
    let daemon = try Daemon(firmware: Self.firmware, stateDirectory: mount.path)
    try daemon.start(extra: ["--log-level", "info"])
    try mount.fill()
    let push = try runTool(
      "otactl",
      [
        "push", try image(4096, in: daemon), "--version", "1.1.0", "--device", daemon.socket, "--link",
        Self.link,
      ])
    #expect(push.status == 13, "\(push.errors)")
    #expect(push.errors.contains("storage is full or failing"), "\(push.errors)")
    #expect(daemon.log.contains("No space left on device (errno 28)"), "\(daemon.log)")
    #expect(daemon.log.contains("\(mount.path.path)/transfer.journal"), "\(daemon.log)")
    #expect(daemon.log.contains("is full: free space there"), "\(daemon.log)")
    _ = daemon.stop()
  }
}

/// A tmpfs of a few KiB mounted on a temporary directory, unmounted when released.
final class SmallFileSystem {
  let path: URL

  /// Root can mount here (CI runs as root; elsewhere the tests that need it are skipped).
  static let isAvailable: Bool = {
    guard getuid() == 0, let probe = try? SmallFileSystem(options: "size=16k") else { return false }
    _ = probe
    return true
  }()

  init(options: String) throws {
    path = FileManager.default.temporaryDirectory.appendingPathComponent("otad-tmpfs-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
    guard mount("tmpfs", path.path, "tmpfs", 0, options) == 0 else {
      try? FileManager.default.removeItem(at: path)
      throw DaemonError("mount -t tmpfs -o \(options): \(String(cString: strerror(errno)))")
    }
  }

  deinit {
    umount2(path.path, Int32(MNT_DETACH))
    try? FileManager.default.removeItem(at: path)
  }

  /// Writes a file until the file system has no space left.
  func fill() throws {
    let fd = open(path.appendingPathComponent("filler").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw DaemonError("cannot create the filler") }
    defer { close(fd) }
    let block = [UInt8](repeating: 0xAB, count: 4096)
    while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
  }
}
