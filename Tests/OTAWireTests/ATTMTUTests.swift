import OTAWire
import Testing

@Suite struct ATTMTUTests {
  @Test func boundsAreTheATTOnes() {
    #expect(ATTMTU.minimum.value == 23)
    #expect(ATTMTU.maximum.value == 517)
    #expect(ATTMTU.range == 23...517)
  }

  @Test(arguments: [(-1, 23), (0, 23), (22, 23), (23, 23), (185, 185), (517, 517), (518, 517), (65535, 517)])
  func clampsIntoTheRange(asked: Int, got: Int) {
    #expect(ATTMTU(clamping: asked).value == got)
  }

  @Test func exactlyRefusesWhatIsOutside() {
    #expect(ATTMTU(exactly: 22) == nil)
    #expect(ATTMTU(exactly: 518) == nil)
    #expect(ATTMTU(exactly: 23) == .minimum)
    #expect(ATTMTU(exactly: 247)?.value == 247)
  }

  @Test func aWriteOrNotificationLeavesThreeBytesToTheHeader() {
    #expect(ATTMTU.minimum.maxWriteValue == 20)
    #expect(ATTMTU.minimum.maxNotifyValue == 20)
    #expect(ATTMTU(clamping: 247).maxWriteValue == 244)
    #expect(ATTMTU.maximum.maxWriteValue == 514)
  }

  @Test func ordersByValue() {
    #expect(ATTMTU.minimum < ATTMTU(clamping: 100))
    #expect(max(ATTMTU(clamping: 185), ATTMTU(clamping: 247)).value == 247)
    #expect("\(ATTMTU(clamping: 185))" == "185")
  }
}
