import Testing

@testable import OTAChecksum

@Suite struct CRC32Tests {
  @Test func checkValueOfTheStandardString() {
    // [P-INT-3]
    #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    #expect(CRC32.checksum([UInt8]()) == 0)
  }

  @Test func streamingAtEverySplitEqualsOneShot() {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<1000).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    let whole = CRC32.checksum(bytes)
    for split in stride(from: 0, through: bytes.count, by: 7) {
      var crc = CRC32()
      crc.update(bytes[0..<split])
      crc.update(bytes[split...])
      #expect(crc.value == whole)
    }
  }

  @Test func combineEqualsTheCRCOfTheConcatenation() {
    let first = Array("window one ".utf8)
    let second = Array("window two".utf8)
    let combined = CRC32.combine(CRC32.checksum(first), CRC32.checksum(second), secondLength: second.count)
    #expect(combined == CRC32.checksum(first + second))
  }
}
