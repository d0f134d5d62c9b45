import Testing

@testable import OTASender
@testable import OTAWire

/// docs/PROTOCOL.md, "Every data write on GATT is at most 510 bytes": data operations too, not
/// only plain chunks, however large the MTU or the write size asked for.
@Suite struct SenderOperationSizeTests {
  /// Compressible, not trivially: every fourth byte varies, so an operation's deflate payload fills
  /// its write and covers more target bytes than it carries.
  static let image: [UInt8] = {
    var state: UInt64 = 0x5EED
    return (0..<40_000).map { index in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return index % 4 == 0 ? UInt8(truncatingIfNeeded: state >> 56) : 0
    }
  }()

  /// The data writes a sender makes at MTU 517 with operations on, asked for `writeSize`.
  static func dataWrites(writeSize: WriteSize) -> [[UInt8]] {
    var sender = SenderEngine(
      image: image,
      configuration: SenderConfiguration(
        version: Version(major: 2, minor: 0, revision: 0), writeSize: writeSize))
    var info = InfoRecord(
      state: .idle, runningSlot: .a, flags: [],
      slotVersions: SlotPair(a: Version(major: 1, minor: 0, revision: 0), b: .zero),
      inactiveSlotContent: .unknown,
      slotCapacity: 65_536, windowCapacity: 65_536, maxChunkPayload: 506, transfer: .idle,
      transferVersion: .zero,
      lastOutcome: .none, features: [.missingRanges, .operations])
    info.maxOperationLength = 65_536
    _ = sender.handle(.start(now: .zero))
    _ = sender.handle(.connected(mtu: 517, now: .zero))
    let asked = sender.handle(.info(info.encoded, now: .zero))
    #expect(asked.contains(.writeControl(Request.features([.missingRanges, .operations]).encoded)))
    let on = Response(.features, .success, .features([.missingRanges, .operations]))
    _ = sender.handle(.notification(on.encoded, now: .zero))
    _ = sender.handle(.notification(Response(.status, .success, .status(.idle)).encoded, now: .zero))
    let prepared = Response(.prepare, .success, .prepared(windowCapacity: 65_536, maxChunkPayload: 506))
    _ = sender.handle(.notification(prepared.encoded, now: .zero))
    #expect(sender.report.transferMode == .compressed)
    return sender.handle(.writable(count: 1000, now: .zero)).compactMap {
      if case .writeData(let bytes) = $0 { bytes } else { nil }
    }
  }

  @Test(arguments: [WriteSize.auto, .fixed(514), .fixed(510)])
  func everyOperationFitsBlueZsWriteLimit(_ writeSize: WriteSize) throws {
    // [P-DATA-1] [P-OP-1]
    let writes = Self.dataWrites(writeSize: writeSize)
    let operations = try writes.filter { $0.count > 4 }.map { try DataOperation(bytes: $0) }
    #expect(operations.count > 10)
    #expect(writes.allSatisfy { $0.count <= 510 }, "the longest: \(writes.map(\.count).max() ?? 0)")
    #expect(operations.contains { $0.length > 510 }, "deflate: more target bytes than the write carries")
  }
}
