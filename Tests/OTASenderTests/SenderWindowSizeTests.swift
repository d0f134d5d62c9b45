import Testing

@testable import OTASender
@testable import OTAWire

/// docs/PROTOCOL.md, the central's phase 2 without missing-range reports: a failed window halves
/// the windows that follow, four good ones in a row double them back (AIMD).
@Suite struct SenderWindowSizeTests {
  typealias Fixture = SenderEngineTests
  static let image: [UInt8] = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 31) }

  @Test mutating func aFailureHalvesTheWindowsAndFourGoodOnesDoubleThemBack() throws {
    // [P-PHASE-6] [P-PHASE-5]
    var fixture = Fixture()
    fixture.sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Fixture.version))
    _ = fixture.connect()
    _ = fixture.answer(Response(.status, .success, .status(.idle)))
    _ = fixture.answer(Response(.prepare, .success, .prepared(windowCapacity: 800, maxChunkPayload: 10)))
    #expect(fixture.sender.transfer?.windowSize == 400, "half the device's window capacity")
    _ = fixture.feed(.writable(count: 100, now: fixture.now))
    #expect(fixture.sender.transfer?.outstanding.map(\.window.end) == [400, 800])
    // Both open windows fail (the device fails every waiting one); the second answer is skipped.
    _ = fixture.answer(Response(.window, .missingData, .offset(0)))
    _ = fixture.answer(Response(.window, .missingData, .offset(0)))
    #expect(fixture.sender.transfer?.windowSize == 200)
    // The failed windows go again as they were; the windows after them are the halved size.
    var answered: [(end: UInt32, sizeAfter: UInt32)] = []
    for _ in 0..<5 {
      _ = fixture.feed(.writable(count: 100, now: fixture.now))
      let head = try #require(fixture.sender.transfer?.outstanding.first).window
      _ = fixture.answer(Response(.window, .success, .offset(head.end)))
      answered.append((head.end, fixture.sender.transfer?.windowSize ?? 0))
    }
    #expect(answered.map(\.end) == [400, 800, 1000, 1200, 1400])
    #expect(answered.map(\.sizeAfter) == [200, 200, 200, 400, 400], "doubled after the fourth good window")
  }

  /// Half the capacity, at most 32 KiB: otad's 256 KiB windows are for frames; chunks keep windows
  /// a droppy link still completes.
  @Test func windowsOfChunksAreHalfTheCapacityAtMost32KiB() {
    // [P-PHASE-5]
    let sizes = [800, 64 << 10, 256 << 10, 1 << 20].map {
      SenderEngine.windowSize(capacity: UInt32($0), windowsInFlight: 2, chunkPayload: 240)
    }
    #expect(sizes == [400, 32 << 10, 32 << 10, 32 << 10])
  }

  @Test mutating func atMostFiveWindowsAreOpenTheDevicesQueue() {
    // [P-PHASE-5]
    var fixture = Fixture()
    // Windows of an eighth of the capacity: eight would fit, the device queues five.
    fixture.sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Fixture.version, windowsInFlight: 8))
    _ = fixture.connect()
    _ = fixture.answer(Response(.status, .success, .status(.idle)))
    _ = fixture.answer(Response(.prepare, .success, .prepared(windowCapacity: 4000, maxChunkPayload: 100)))
    let actions = fixture.feed(.writable(count: 1000, now: fixture.now))
    let windows = Fixture.controls(actions).filter { if case .window = $0 { true } else { false } }
    #expect(windows.count == 5)
    #expect(fixture.sender.transfer?.outstanding.map(\.window.end) == [500, 1000, 1500, 2000, 2500])
  }

  /// A device whose receive span holds several windows: windows of half its capacity as ever,
  /// streamed as far past the committed offset as the span reaches (five, the device's queue, here).
  @Test mutating func aWideReceiveSpanTakesMoreWindowsAhead() throws {
    // [P-PHASE-5] [P-SPAN-1]
    var fixture = Fixture()
    fixture.sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Fixture.version))
    var info = try InfoRecord(bytes: Fixture.info(capacity: 8192))
    info.receiveSpan = 2400
    _ = fixture.connect(info: info.encoded)
    _ = fixture.answer(Response(.status, .success, .status(.idle)))
    _ = fixture.answer(Response(.prepare, .success, .prepared(windowCapacity: 400, maxChunkPayload: 100)))
    #expect(fixture.sender.transfer?.windowSize == 200, "half the window capacity")
    _ = fixture.feed(.writable(count: 1000, now: fixture.now))
    #expect(fixture.sender.transfer?.outstanding.map(\.window.end) == [200, 400, 600, 800, 1000])
    // The first commits: one more window opens, still within the span past the new offset.
    _ = fixture.answer(Response(.window, .success, .offset(200)))
    _ = fixture.feed(.writable(count: 1000, now: fixture.now))
    #expect(fixture.sender.transfer?.outstanding.map(\.window.end) == [400, 600, 800, 1000, 1200])
    // A span of 900: windows end within committed + 900.
    var narrow = Fixture()
    narrow.sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Fixture.version))
    info.receiveSpan = 900
    _ = narrow.connect(info: info.encoded)
    _ = narrow.answer(Response(.status, .success, .status(.idle)))
    _ = narrow.answer(Response(.prepare, .success, .prepared(windowCapacity: 400, maxChunkPayload: 100)))
    _ = narrow.feed(.writable(count: 1000, now: narrow.now))
    #expect(narrow.sender.transfer?.outstanding.map(\.window.end) == [200, 400, 600, 800])
  }

  /// A span of less than two windows (a device from before it reads as one window): the old
  /// slices of half the capacity, all within one capacity past the committed offset.
  @Test mutating func aNarrowSpanKeepsHalfWindowsWithinTheCapacity() throws {
    // [P-PHASE-5] [P-INFO-2]
    var fixture = Fixture()
    fixture.sender = SenderEngine(
      image: Self.image, configuration: SenderConfiguration(version: Fixture.version))
    let info = try InfoRecord(bytes: Fixture.info(capacity: 8192))
    _ = fixture.connect(info: Array(info.encoded.prefix(92)))
    _ = fixture.answer(Response(.status, .success, .status(.idle)))
    _ = fixture.answer(Response(.prepare, .success, .prepared(windowCapacity: 400, maxChunkPayload: 100)))
    #expect(fixture.sender.transfer?.windowSize == 200)
    _ = fixture.feed(.writable(count: 1000, now: fixture.now))
    #expect(fixture.sender.transfer?.outstanding.map(\.window.end) == [200, 400])
  }
}
