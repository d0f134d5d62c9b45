import Foundation
import OTAReport
import OTATestSupport
import Testing

/// Data operations between the two processes over the simulated link: a device running the
/// factory firmware (Images/firmware-v1.bin, an MCUboot image: it says its own length), a push of
/// firmware-v2 with `--base` (a directory of releases), and `--dry-run`, `--full`.
@Suite(.serialized) struct DeltaProcessTests {
  static let root = RepositoryRoot.url
  static func sample(_ name: String) -> String { root.appendingPathComponent("Images/\(name)").path }

  func daemon() throws -> Daemon {
    let firmware = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin"))))
    let daemon = try Daemon(capacity: "64KiB", firmware: firmware)
    try daemon.start()
    return daemon
  }

  func push(_ daemon: Daemon, _ extra: [String], image: String = "firmware-v2.bin") throws -> (
    CommandResult, [String: Any]
  ) {
    let result = try runTool(
      "otactl",
      [
        "push", Self.sample(image), "--device", daemon.socket, "--link",
        "mtu=247,interval=2ms,packets=8",
        "--no-activate", "--json",
      ] + extra)
    return (result, result.jsonLines.last { $0["event"] as? String == "result" } ?? [:])
  }

  /// `otactl delta` plans once; `push --delta-plan` sends that plan instead of planning again,
  /// and a plan made for other images (or no plan at all) is refused before connecting, saying why.
  @Test func aDeltaPlanMadeOnceIsPushedAndOneForOtherImagesIsRefused() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "delta-plan-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let plan = folder.appendingPathComponent("v2.delta").path
    let v1 = Self.sample("firmware-v1.bin")
    let made = try runTool("otactl", ["delta", v1, Self.sample("firmware-v2.bin"), "-o", plan])
    #expect(made.status == 0, "\(made.output)\n\(made.errors)")
    #expect(
      made.output.contains(" segments, ") && made.output.contains("bytes from the base"), "\(made.output)")
    // The plan holds the release as zstd frames too; these two are siblings (v2 changes v1's app and
    // 512 bytes of its assets), and the frame carrying the changes is what the push sends.
    #expect(made.output.contains("1 zstd frames at level 22"), "\(made.output)")
    let daemon = try daemon()
    let (result, final) = try push(daemon, ["--base", v1, "--delta-plan", plan])
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(final["transferMode"] as? String == "delta", "\(final)")
    #expect(final["framesSent"] as? Int == 1, "\(final)")
    #expect(
      (final["bytesOnAir"] as? Int ?? .max) < 4096,
      "a sibling's delta is a fraction of its 41 686 bytes: \(final)")
    let image = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v2.bin"))))
    #expect(daemon.slotBytes(daemon.slotB, count: image.count) == image)
    // The same plan for another image, against another base, or a file that is no plan.
    let refusals: [([String], String, String)] = [
      (["--base", v1, "--delta-plan", plan], "firmware-v1.bin", "was made for another image"),
      (
        ["--base", Self.sample("firmware-v2.bin"), "--delta-plan", plan], "firmware-v2.bin",
        "against a base none of"
      ),
      (["--base", v1, "--delta-plan", v1], "firmware-v2.bin", "not a delta plan"),
      (["--delta-plan", plan], "firmware-v2.bin", "needs the --base"),
    ]
    for (arguments, image, reason) in refusals {
      let (refused, _) = try push(daemon, arguments, image: image)
      #expect(refused.status != 0 && refused.errors.contains(reason), "\(arguments): \(refused.errors)")
    }
  }

  /// An absurd zstd level is refused before anything is read or written, saying what to give.
  @Test func deltaRefusesAZstdLevelOutsideOneToTwentyTwo() throws {
    let plan = FileManager.default.temporaryDirectory.appendingPathComponent("level-\(UUID().uuidString)")
      .path
    for level in ["23", "-1"] {
      let result = try runTool(
        "otactl",
        [
          "delta", Self.sample("firmware-v1.bin"), Self.sample("firmware-v2.bin"), "-o", plan,
          "--zstd-level=\(level)",
        ])
      #expect(
        result.status != 0 && result.errors.contains("give 1 to 22, or 0 for no frames"), "\(result.errors)")
      #expect(!FileManager.default.fileExists(atPath: plan))
    }
  }

  @Test func infoShowsTheOperationsLimitAndTheFactoryImage() throws {
    let daemon = try daemon()
    let result = try runTool("otactl", ["info", "--device", daemon.socket, "--json"])
    #expect(result.status == 0, "\(result.output)\n\(result.errors)")
    let info = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] ?? [:]
    // The factory image, an MCUboot image, known by its own header: 41686 bytes, CRC32 b0811374.
    #expect(info["runningImageSize"] as? Int == 41686 && info["runningImageCRC32"] as? String == "b0811374")
    #expect((info["maxOperationLength"] as? Int ?? 0) > 0, "\(info)")
    #expect(info["maxFrameLength"] as? Int == 1 << 20, "\(info)")
  }

  @Test func aDryRunSaysWhatADeltaWouldSendAndSendsNothing() throws {
    let daemon = try daemon()
    let (result, final) = try push(
      daemon, ["--base", Self.root.appendingPathComponent("Images").path, "--dry-run"])
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(final["dryRun"] as? Bool == true && final["transferMode"] as? String == "delta", "\(final)")
    #expect(final["bytesOnAir"] as? Int == 0)
    let planned = final["plannedBytesOnAir"] as? Int ?? .max
    #expect(planned > 0 && planned < final["plainBytesOnAir"] as? Int ?? 0, "\(final)")
    let status = try daemon.status()
    #expect((status.journal?.state ?? "idle") == "idle", "\(status)")
  }

  @Test func aPushWithABaseDirectorySendsTheDeltaAndFullRefusesIt() throws {
    let daemon = try daemon()
    let (result, final) = try push(daemon, ["--base", Self.root.appendingPathComponent("Images").path])
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(final["transferMode"] as? String == "delta", "\(final)")
    #expect((final["bytesOnAir"] as? Int ?? .max) < (final["plainBytesOnAir"] as? Int ?? 0), "\(final)")
    let image = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v2.bin"))))
    #expect(daemon.slotBytes(daemon.slotB, count: image.count) == image)
    #expect(daemon.log.contains("operations-applied="), "otad logs the operations it applied")

    let (again, plain) = try push(daemon, ["--full"])
    #expect(again.status == 0, "\(again.output)\n\(again.errors)")
    #expect(plain["transferMode"] as? String == "plain", "\(plain)")
  }

  /// No base: the same bytes the device runs, sent again (`--force`), go as copies of its blocks,
  /// whose hashes otactl read with BLOCK HASHES (features bit 2) through both processes: 41 686
  /// bytes in 4 KiB blocks, 11 hashes in one page at MTU 247.
  @Test func withoutABaseTheBlocksComeFromBlockHashPages() throws {
    let daemon = try daemon()
    let (result, final) = try push(daemon, ["--force"], image: "firmware-v1.bin")
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(final["transferMode"] as? String == "block copies", "\(final)")
    #expect(final["blockSize"] as? Int == 4096 && final["blockHashesRead"] as? Int == 11, "\(final)")
    #expect(final["blockHashRequests"] as? Int == 1, "\(final)")
    #expect((final["bytesOnAir"] as? Int ?? .max) < 1000, "\(final)")
    let image = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin"))))
    #expect(daemon.slotBytes(daemon.slotB, count: image.count) == image)
  }

  /// A slot written by hand (firmware-v1 with its MCUboot magic wiped: no header says its length)
  /// is unknown to otad, until `otad adopt` records it; then its next release (the same bytes with
  /// one changed every 997, raw, version 2.0.0) with that file as its base goes as a delta, and the
  /// running otad took the adoption without a restart (SIGHUP).
  @Test func aSlotWrittenByHandIsAdoptedAndTheNextReleaseGoesAsADelta() throws {
    var factory = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.sample("firmware-v1.bin"))))
    factory.replaceSubrange(0..<4, with: [0, 0, 0, 0])
    let daemon = try Daemon(capacity: "64KiB", firmware: factory)
    try daemon.start()
    let base = daemon.folder.appendingPathComponent("factory.img")
    try Data(factory).write(to: base)
    func runningImageSize() throws -> Int? {
      let result = try runTool("otactl", ["info", "--device", daemon.socket, "--json"])
      let info = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] ?? [:]
      return info["runningImageSize"] as? Int
    }
    #expect(try runningImageSize() == 0)
    let adopted = try runTool(
      "otad",
      ["adopt"] + daemon.storageArguments + ["--length", "\(factory.count)", "--image-version", "1.0.0"])
    #expect(adopted.status == 0, "\(adopted.output)\n\(adopted.errors)")
    #expect(adopted.output.contains("slot A adopted: \(factory.count) bytes"), "\(adopted.output)")
    #expect(adopted.output.contains("told the running otad"), "\(adopted.output)")
    #expect(try runningImageSize() == factory.count)
    var release = factory
    for index in stride(from: 100, to: release.count, by: 997) { release[index] &+= 1 }
    let next = daemon.folder.appendingPathComponent("release.img")
    try Data(release).write(to: next)
    let result = try runTool(
      "otactl",
      [
        "push", next.path, "--version", "2.0.0", "--device", daemon.socket, "--link",
        "mtu=247,interval=2ms,packets=8", "--no-activate", "--json", "--base", base.path,
      ])
    let final = result.jsonLines.last { $0["event"] as? String == "result" } ?? [:]
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(final["transferMode"] as? String == "delta", "\(final)")
    #expect(daemon.slotBytes(daemon.slotB, count: release.count) == release)
    #expect((final["bytesOnAir"] as? Int ?? .max) < (final["plainBytesOnAir"] as? Int ?? 0) / 4, "\(final)")
    // [P-CEN-14] The release after, planned once with its zstd frames: sent as those.
    var third = release
    for index in stride(from: 50, to: third.count, by: 1499) { third[index] &+= 3 }
    let thirdFile = daemon.folder.appendingPathComponent("third.img")
    try Data(third).write(to: thirdFile)
    let plan = daemon.folder.appendingPathComponent("third.delta").path
    let made = try runTool("otactl", ["delta", base.path, thirdFile.path, "-o", plan])
    #expect(made.status == 0 && made.output.contains("1 zstd frames at level 22"), "\(made.output)")
    let framed = try runTool(
      "otactl",
      [
        "push", thirdFile.path, "--version", "3.0.0", "--device", daemon.socket, "--link",
        "mtu=247,interval=2ms,packets=8", "--no-activate", "--json", "--base", base.path, "--delta-plan",
        plan,
      ])
    let framedResult = framed.jsonLines.last { $0["event"] as? String == "result" } ?? [:]
    #expect(framed.status == 0, "\(framed.output)\n\(framed.errors)\n\(daemon.log)")
    #expect(framedResult["framesSent"] as? Int == 1, "\(framedResult)")
    let frameBytes = framedResult["plannedFrameBytesOnAir"] as? Int ?? 0
    #expect(frameBytes > 0 && frameBytes == framedResult["plannedBytesOnAir"] as? Int, "\(framedResult)")
    #expect(
      (framedResult["bytesOnAir"] as? Int ?? .max) < (framedResult["plainBytesOnAir"] as? Int ?? 0) / 100,
      "\(framedResult)")
    #expect(daemon.slotBytes(daemon.slotB, count: third.count) == third)
    #expect(daemon.log.contains("frames-decoded=1"), "otad logs the frames it decoded")
    let again = try runTool("otad", ["adopt"] + daemon.storageArguments)
    #expect(again.status == 0 && again.output.contains("already holds a known image"), "\(again.output)")
    let refused = try runTool("otad", ["adopt"] + daemon.storageArguments + ["--force", "--length", "0"])
    #expect(
      refused.status != 0 && refused.errors.contains("give the image's own length"), "\(refused.errors)")
  }
}
