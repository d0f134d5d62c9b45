import Testing

@testable import OTAWire

@Suite struct SlotPairTests {
  @Test func subscriptsBySlotAndMapsInSlotOrder() {
    var pair = SlotPair(a: "a.img", b: "b.img")
    #expect(pair[.a] == "a.img" && pair[.b] == "b.img")
    pair[.b] = "other.img"
    #expect(pair.b == "other.img" && pair.a == "a.img")
    var order: [String] = []
    let lengths = pair.map { path in
      order.append(path)
      return path.count
    }
    #expect(lengths == SlotPair(a: 5, b: 9) && order == ["a.img", "other.img"])
    #expect(pair.mapWithSlot { slot, path in "\(slot):\(path)" }.values == ["A:a.img", "B:other.img"])
    #expect(pair.firstSlot { $0.hasPrefix("other") } == .b && pair.firstSlot { $0.isEmpty } == nil)
  }

  @Test func buildsEachSlotAFirstAndStopsAtTheFirstError() {
    var asked: [SlotID] = []
    let pair = SlotPair.bySlot { slot in
      asked.append(slot)
      return slot.rawValue
    }
    #expect(pair == SlotPair(a: 0, b: 1) && asked == [.a, .b])
    #expect(throws: WireError.malformed("A")) {
      _ = try SlotPair.bySlot { slot throws(WireError) -> Int in throw .malformed("\(slot)") }
    }
    #expect(SlotPair(repeating: 7).values == [7, 7])
  }

  @Test func versionsStayInTheirWireOrder() throws {
    // Info carries slot A's version, then slot B's: the pair must not swap them.
    let info = InfoRecordTests.sample
    var bytes: [UInt8] = []
    info.append(to: &bytes)
    let decoded = try InfoRecord(bytes: bytes)
    #expect(decoded.slotVersions == info.slotVersions)
    #expect(decoded.slotVersions.b == Version(major: 1, minor: 1, revision: 2, build: 3))
    #expect(decoded.runningVersion == decoded.slotVersions.b)
  }
}
