import Foundation
import OTAChecksum
import OTAEngine
import OTAWire
import Testing

/// docs/PROTOCOL.md's zstd frames (Info features bit 4) as a contract, in the bytes a central sends:
/// the Info field, a frame in parts in any order, frames made by the reference CLI, and every rule
/// whose breach drops the part or the frame.
@Suite struct ZstdFrameContractTests {
  typealias Contract = ProtocolContractTests
  static func le32(_ value: UInt32) -> [UInt8] { Contract.le32(value) }

  /// A device running its recorded 3000-byte image with operations and frames turned on (FEATURES
  /// bits 0, 1 and 4), a transfer of `target` prepared.
  static func bench(target: [UInt8], recordRunningImage: Bool = true, features: UInt32 = 0x13) throws
    -> ProtocolBench
  {
    var bench = try ProtocolBench(recordRunningImage: recordRunningImage)
    #expect(
      try bench.controlBytes([0x08] + Self.le32(features)) == [[0x60, 0x08, 0x00] + Self.le32(features)])
    let prepare = Contract.prepare(size: UInt32(target.count), crc32: CRC32.checksum(target))
    #expect(try bench.control(prepare).map(\.status) == [.success])
    return bench
  }

  /// One part: `target offset u32, 0x04, part u32, bytes`.
  static func part(_ target: UInt32, _ position: Int, last: Bool, _ bytes: ArraySlice<UInt8>) -> [UInt8] {
    Self.le32(target) + [0x04] + Self.le32(UInt32(position) | (last ? 1 << 31 : 0)) + bytes
  }

  /// `frame` cut into parts of `size` bytes.
  static func parts(_ target: UInt32, _ frame: [UInt8], size: Int = 100) -> [[UInt8]] {
    stride(from: 0, to: frame.count, by: size).map { start in
      let end = min(frame.count, start + size)
      return part(target, start, last: end == frame.count, frame[start..<end])
    }
  }

  /// A target that shares most of its bytes with the running image, and a frame of it.
  static func target(_ running: [UInt8]) -> [UInt8] {
    var target =
      Array(running[1000..<3000]) + Array(running[0..<1500]) + DeviceFixture.image(size: 596, seed: 31)
    target[10] ^= 0xFF
    return target
  }

  static func frame(_ bytes: [UInt8], against base: [UInt8], length: Int? = nil) throws -> [UInt8] {
    let encoder = try #require(ZstdFrameEncoder(base: base, level: 19, frameLength: length ?? bytes.count))
    return try #require(encoder.frame(bytes[...]))
  }

  @Test func infoAnnouncesFramesAndTheirLimit() throws {
    // [P-INFO-30] [P-INFO-24] [P-INFO-1]
    let bench = try ProtocolBench(recordRunningImage: true)
    let info = bench.host.info().encoded
    #expect(info.count == 114)
    #expect(Array(info[74..<78]) == Self.le32(63))
    // The default 1 MiB (inside the receive span: 4 MiB).
    #expect(Array(info[96..<100]) == Self.le32(1 << 20))
    // A device without the feature says 0.
    let without = try ProtocolBench(features: Features.all.subtracting(.zstdFrames)).host.info()
    #expect(without.maxFrameLength == 0 && !without.features.contains(.zstdFrames))
  }

  @Test func aFrameInPartsInAnyOrderRebuildsItsTargetBytes() throws {
    // [P-ZSTD-1] [P-ZSTD-2] [P-ZSTD-3]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    let target = Self.target(running)
    let frame = try Self.frame(target, against: running)
    #expect(frame.count < 800, "\(frame.count) bytes: the frame reaches into the running image")
    var bench = try Self.bench(target: target)
    let parts = Self.parts(0, frame)
    #expect(parts.count >= 3)
    // The last part first, then a duplicate of the first: nothing is stored until the frame is whole.
    for part in [parts[parts.count - 1], parts[0]] + parts.dropLast() {
      #expect(bench.host.engine.coverage.isEmpty)
      try bench.data(part)
    }
    // A late copy of a part of a frame already decoded is a duplicate, not a new frame.
    try bench.data(parts[1])
    #expect(bench.host.engine.heldFrameParts == (0, 0))
    #expect(
      try bench.controlBytes(Contract.window(0, 4096, CRC32.checksum(target)))
        == [Contract.windowAnswer(0x00, 4096)])
    #expect(bench.host.engine.statistics.framesDecoded == 1)
    #expect(bench.host.engine.statistics.chunksDropped == 0)
    #expect(bench.fixture.runningSlotUntouched)
  }

  /// The reference tool's bytes: `zstd --patch-from=RUNNING TARGET` (libzstd's refPrefix) makes a
  /// frame the device decodes as its own encoder's.
  @Test func aFrameFromZstdsOwnPatchFromIsDecoded() throws {
    // [P-ZSTD-2] [SEC-ATK-18]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    let target = Self.target(running)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zstd-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let old = directory.appendingPathComponent("old"), new = directory.appendingPathComponent("new")
    let patch = directory.appendingPathComponent("patch.zst")
    try Data(running).write(to: old)
    try Data(target).write(to: new)
    let zstd = Process()
    zstd.executableURL = URL(fileURLWithPath: "/usr/bin/zstd")
    zstd.arguments = ["-q", "-19", "--patch-from=\(old.path)", new.path, "-o", patch.path]
    try zstd.run()
    zstd.waitUntilExit()
    #expect(zstd.terminationStatus == 0)
    let frame = [UInt8](try Data(contentsOf: patch))
    var bench = try Self.bench(target: target)
    for part in Self.parts(0, frame, size: 150) { try bench.data(part) }
    #expect(
      try bench.controlBytes(Contract.window(0, 4096, CRC32.checksum(target)))
        == [Contract.windowAnswer(0x00, 4096)])
  }

  @Test func everyBrokenRuleDropsThePartOrTheFrame() throws {
    // [P-ZSTD-4] [P-ZSTD-6] [SEC-CHECK-9] [SEC-ATK-18]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    let target = Self.target(running) + DeviceFixture.image(size: 4096, seed: 32)
    let frame = try Self.frame(Array(target[0..<4096]), against: running)
    let zeros = try Self.frame([UInt8](repeating: 0, count: 9000), against: running)
    var cut = frame
    cut[0] ^= 0xFF  // its magic number
    let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18] + Self.le32(4) + [1, 2, 3, 4]
    let hostile: [(String, [[UInt8]])] = [
      ("a frame offset past the image", Self.parts(8192, frame)),
      (
        "a part past the frame's size limit",
        [Self.part(0, (1 << 20) + (1 << 20) / 128 + 64 * 1024, last: true, [1])]
      ),
      ("a frame with a byte after it", Self.parts(0, frame + [0])),
      ("a frame claiming more than fits", Self.parts(4096, zeros)),
      ("a frame with a wrong magic number", Self.parts(0, cut)),
      ("a skippable frame", Self.parts(0, skippable)),
      ("a part with no payload", [Self.part(0, 0, last: true, [])]),
    ]
    for (name, parts) in hostile {
      var bench = try Self.bench(target: target)
      for part in parts { try bench.data(part) }
      #expect(bench.host.engine.coverage.isEmpty, "\(name)")
      #expect(
        bench.host.engine.statistics.chunksDropped >= 1,
        "\(name): \(String(describing: bench.host.engine.lastRejection))")
      #expect(bench.host.engine.statistics.framesDecoded == 0, "\(name)")
      #expect(bench.host.info().chunksDropped >= 1, "\(name): counted in Info")
    }
    // A frame over bytes stored already in part is dropped before it is decoded; one over bytes
    // all stored is a duplicate.
    var overlapping = try Self.bench(target: target)
    try overlapping.data(Self.le32(100) + [0x00] + Array(target[100..<200]))
    for part in Self.parts(0, frame) { try overlapping.data(part) }
    #expect(overlapping.host.engine.statistics.framesDecoded == 0)
    #expect(overlapping.host.engine.statistics.chunksDropped == 1)
    if case .frameOverStoredBytes(let range) = overlapping.host.engine.lastRejection {
      #expect(range == 0..<4096)
    } else {
      Issue.record("\(String(describing: overlapping.host.engine.lastRejection))")
    }
    var stored = try Self.bench(target: target)
    try stored.data(Self.le32(0) + [0x00] + Array(target[0..<4096]))
    let duplicates = stored.host.engine.statistics.chunksDuplicate
    for part in Self.parts(0, frame) { try stored.data(part) }
    #expect(
      stored.host.engine.statistics.framesDecoded == 0 && stored.host.engine.statistics.chunksDropped == 0)
    // Each part is a duplicate as it comes: its frame's first byte is stored.
    #expect(stored.host.engine.statistics.chunksDuplicate == duplicates + Self.parts(0, frame).count)
    // A part past the end the last part set, and a second last part that moves it.
    var bench = try Self.bench(target: target)
    let parts = Self.parts(0, frame)
    try bench.data(parts[parts.count - 1])
    try bench.data(Self.part(0, frame.count, last: false, [1]))
    try bench.data(Self.part(0, frame.count + 10, last: true, [1]))
    #expect(bench.host.engine.statistics.chunksDropped == 2)
    for part in parts.dropLast() { try bench.data(part) }
    #expect(bench.host.engine.statistics.framesDecoded == 1, "the frame itself is still whole")
  }

  @Test func partsNeedFeatureBitFourAndAKnownRunningImage() throws {
    // [P-ZSTD-4] [P-ZSTD-6] [SEC-CHECK-9] [SEC-ATK-18]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    let target = Self.target(running)
    let frame = try Self.frame(target, against: running)
    for (features, recorded) in [(UInt32(0x03), true), (0x13, false)] {
      var bench = try Self.bench(target: target, recordRunningImage: recorded, features: features)
      for part in Self.parts(0, frame) { try bench.data(part) }
      #expect(bench.host.engine.coverage.isEmpty && bench.host.engine.heldFrameParts == (0, 0))
      #expect(bench.host.engine.statistics.operationsRejected == Self.parts(0, frame).count)
    }
  }

  @Test func heldPartsAreBoundedAndForgottenAtADisconnectAndACommit() throws {
    // [P-ZSTD-5] [SEC-CHECK-9] [SEC-ATK-18]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    let target = DeviceFixture.image(size: 64 * 1024, seed: 33)
    var bench = try Self.bench(target: target)
    // Eight frames held (a first part each), the ninth refused.
    for index in 0..<9 { try bench.data(Self.part(UInt32(index) * 4096, 0, last: false, [1, 2, 3])) }
    #expect(bench.host.engine.heldFrameParts == (8, 24))
    #expect(bench.host.engine.statistics.chunksDropped == 1)
    // At most 4 × 1 MiB of parts: a part that would pass it is dropped.
    for index in 0..<4 { try bench.data(Self.part(UInt32(index) * 4096, 1 << 20, last: false, [1])) }
    #expect(bench.host.engine.heldFrameParts.bytes <= 4 << 20)
    #expect(bench.host.engine.statistics.chunksDropped == 2)
    // Committed past the first frame's offset: its parts go; the others stay.
    try bench.data(Self.le32(0) + [0x00] + Array(target[0..<4096]))
    #expect(
      try bench.controlBytes(Contract.window(0, 4096, CRC32.checksum(target[0..<4096])))
        == [Contract.windowAnswer(0x00, 4096)])
    #expect(bench.host.engine.heldFrameParts.frames == 7)
    // A disconnect forgets them all: a frame's last part after it completes nothing.
    try bench.reconnect()
    #expect(bench.host.engine.heldFrameParts == (0, 0))
    _ = running
  }

  @Test func aFrameAgainstAnotherImageFailsItsWindowNeverStoresAWrongImage() throws {
    // [P-ZSTD-7] [SEC-CHECK-9] [SEC-ATK-18]
    let running = try ProtocolBench(recordRunningImage: true).fixture.runningImage
    let target = Self.target(running)
    let other = Array(running[500...] + running[..<500])
    let frame = try Self.frame(target, against: other)
    var bench = try Self.bench(target: target)
    for part in Self.parts(0, frame) { try bench.data(part) }
    let answers = try bench.controlBytes(Contract.window(0, 4096, CRC32.checksum(target)))
    #expect(answers != [Contract.windowAnswer(0x00, 4096)], "the wrong bytes never commit")
    #expect(bench.host.info().transfer.committedOffset == 0)
    #expect(bench.fixture.runningSlotUntouched)
  }
}
