import Testing

@testable import OTATrust

@Suite("PEM and base64")
struct PEMTests {
  /// RFC 4648 section 10's test vectors.
  static let vectors: [(String, String)] = [
    ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
    ("foobar", "Zm9vYmFy"),
  ]

  @Test func base64MatchesRFC4648Vectors() {
    for (plain, encoded) in Self.vectors {
      #expect(Base64.encode(Array(plain.utf8)) == encoded)
      #expect(Base64.decode(encoded) == Array(plain.utf8))
    }
  }

  @Test func base64RoundTripsEveryByteAndLength() {
    for count in 0...70 {
      let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
      #expect(Base64.decode(Base64.encode(bytes)) == bytes, "\(count) bytes")
    }
    let all = (0...255).map { UInt8($0) }
    #expect(Base64.decode(Base64.encode(all)) == all)
  }

  @Test(arguments: ["Zg=", "Zm9", "Z===", "Zg==Zg==", "Zm=v", "Zm9v!A==", "Zm 9v", "Zg=A"])
  func base64RefusesMalformedText(_ text: String) {
    #expect(Base64.decode(text) == nil)
  }

  @Test func pemBlockRoundTripsWithSixtyFourCharacterLines() throws {
    let der = (0..<100).map { UInt8($0) }
    let text = PEMBlock(label: "PUBLIC KEY", der: der).text
    let lines = text.split(separator: "\n")
    #expect(lines.first == "-----BEGIN PUBLIC KEY-----")
    #expect(lines.last == "-----END PUBLIC KEY-----")
    #expect(lines[1].count == 64 && lines[2].count == 64 && lines[3].count == 8)
    #expect(text.hasSuffix("-----\n"))
    #expect(try PEMBlock(text: text) == PEMBlock(label: "PUBLIC KEY", der: der))
  }

  @Test func pemDecodingSkipsSurroundingTextAndCarriageReturns() throws {
    let text =
      "a comment\r\n-----BEGIN PRIVATE KEY-----\r\nZm9v\r\nYmFy\r\n-----END PRIVATE KEY-----\r\ntrailer\n"
    #expect(try PEMBlock(text: text) == PEMBlock(label: "PRIVATE KEY", der: Array("foobar".utf8)))
  }

  @Test func pemDecodingRefusesBrokenBlocks() {
    #expect(throws: KeyError.notPEM("no '-----BEGIN ...-----' line")) { try PEMBlock(text: "Zm9v") }
    #expect(throws: KeyError.notPEM("no '-----END PUBLIC KEY-----' line")) {
      try PEMBlock(text: "-----BEGIN PUBLIC KEY-----\nZm9v\n-----END PRIVATE KEY-----\n")
    }
    #expect(throws: KeyError.notPEM("the 'PUBLIC KEY' block is not valid base64")) {
      try PEMBlock(text: "-----BEGIN PUBLIC KEY-----\nZm9v!\n-----END PUBLIC KEY-----\n")
    }
    #expect(
      throws: KeyError.unsupported(
        "the PEM block has headers (an encrypted legacy key?); use an unencrypted PKCS#8 key")
    ) {
      try PEMBlock(
        text: "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nZm9v\n-----END EC PRIVATE KEY-----\n")
    }
  }
}
