import Foundation
import OTATestSupport
import OTAWire
import Testing

@Suite struct TestDataTests {
  @Test func hexNotationReadsAndWritesBytes() {
    #expect(HexNotation.bytes("a1 61\n7f00") == [0xA1, 0x61, 0x7F, 0x00])
    #expect(HexNotation.string([0xA1, 0x0F, 0x00]) == "a10f00")
  }

  @Test func seededBytesAreTheSameForTheSameSeed() {
    #expect(SeededGenerator.bytes(20, seed: 7) == SeededGenerator.bytes(20, seed: 7))
    #expect(SeededGenerator.bytes(20, seed: 7) != SeededGenerator.bytes(20, seed: 8))
    #expect(SeededGenerator.bytes(13, seed: 7) == Array(SeededGenerator.bytes(20, seed: 7).prefix(13)))
  }

  @Test func theRepositoryRootHoldsThePackage() throws {
    #expect(try RepositoryRoot.text("Package.swift").contains("OTATestSupport"))
  }

  @Test func aTemporaryDirectoryIsGoneAfterwards() throws {
    let path = try withTemporaryDirectory { path in
      #expect(FileManager.default.fileExists(atPath: path))
      return path
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func theCapturedLogKeepsLevelMessageAndMetadata() {
    let log = CapturedLog()
    log.logger.warning("dropped", metadata: ["count": "3"])
    #expect(log.messages == ["warning dropped"])
    #expect(log.lines.first?.metadata["count"] == "3")
  }
}
