import Testing

@testable import OTAWire

@Suite struct VersionTests {
  @Test func textRoundTrips() {
    // [P-GATT-8]
    #expect(Version(text: "1.2.3+4") == Version(major: 1, minor: 2, revision: 3, build: 4))
    #expect(Version(text: "1.2") == Version(major: 1, minor: 2, revision: 0))
    #expect(Version(major: 255, minor: 0, revision: 65535, build: 7).description == "255.0.65535+7")
    for bad in ["", "1.", "a.b", "256.0.0", "1.2.3.4", "1.2.3+", "1+2+3", "1.2.70000"] {
      #expect(Version(text: bad) == nil, "\(bad)")
    }
  }

  @Test func bytesAreMCUbootImageVersion() throws {
    // [P-GATT-8]
    let bytes: [UInt8] = [0x02, 0x05, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12]
    var reader = ByteReader(bytes)
    let version = try Version(from: &reader)
    #expect(version == Version(major: 2, minor: 5, revision: 0x1234, build: 0x1234_5678))
    var encoded: [UInt8] = []
    version.append(to: &encoded)
    #expect(encoded == bytes)
  }

  @Test func ordersByFieldsInTurn() {
    // [P-GATT-8] [SEC-DOWN-1]
    let ordered = ["0.9.9+9", "1.0.0", "1.0.0+1", "1.0.1", "1.1.0", "2.0.0"].compactMap(Version.init(text:))
    #expect(ordered.count == 6)
    #expect(ordered == ordered.sorted())
    #expect(ordered.shuffled().sorted() == ordered)
  }
}
