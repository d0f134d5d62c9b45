import Testing

@testable import OTAWire

@Suite struct InfoRecordTests {
  static let sample: InfoRecord = {
    var info = InfoRecord(
      state: .receiving, runningSlot: .b, flags: [.runningOnTrial, .signaturesRequired],
      slotVersions: SlotPair(
        a: Version(major: 1, minor: 0, revision: 0), b: Version(major: 1, minor: 1, revision: 2, build: 3)),
      inactiveSlotContent: .receiving, slotCapacity: 8 << 20, windowCapacity: 65536, maxChunkPayload: 240,
      transfer: TransferStatus(state: .receiving, size: 123_457, crc32: 0xAABB_CCDD, committedOffset: 65536),
      transferVersion: Version(major: 2, minor: 0, revision: 0),
      lastOutcome: UpdateOutcome(
        result: .rolledBack, from: Version(major: 1, minor: 1, revision: 0),
        to: Version(major: 1, minor: 2, revision: 0),
        reason: .healthCheckFailed, attemptsUsed: 2), chunksDropped: 0x0102_0304, features: .missingRanges,
      l2capPSM: 0x0081)
    info.maxOperationLength = 4096
    info.runningImageSize = 41526
    info.runningImageCRC = 0x1234_5678
    info.receiveSpan = 1 << 20
    return info
  }()

  @Test func layoutIsFixed() {
    let bytes = Self.sample.encoded
    #expect(bytes.count == InfoRecord.byteCount)
    #expect(bytes[0] == 1)  // protocol version
    #expect(bytes[1] == 2)  // receiving
    #expect(bytes[2] == 1)  // running slot B
    #expect(bytes[3] == 0b011)  // on trial, signatures required
    #expect(bytes[12] == 1 && bytes[13] == 1)  // slot B version 1.1...
    #expect(bytes[20] == SlotContent.receiving.rawValue)
    #expect(Array(bytes[25..<29]) == [0x00, 0x00, 0x01, 0x00])  // window capacity 65536
    #expect(bytes[43] == 2 && bytes[60] == 1)  // rolled back, health check failed
    #expect(bytes[61] == 2)  // transfer version 2.0.0
    #expect(bytes[69] == 2)  // two trial boots used
    #expect(Array(bytes[70..<74]) == [0x04, 0x03, 0x02, 0x01])  // chunks dropped u32
    #expect(Array(bytes[74..<78]) == [0x01, 0x00, 0x00, 0x00])  // features u32: missing ranges
    #expect(Array(bytes[78..<80]) == [0x81, 0x00])  // L2CAP PSM u16
    #expect(Array(bytes[80..<84]) == [0x00, 0x10, 0x00, 0x00])  // max operation length 4096
    #expect(Array(bytes[84..<88]) == [0x36, 0xA2, 0x00, 0x00])  // running image size 41526
    #expect(Array(bytes[88..<92]) == [0x78, 0x56, 0x34, 0x12])  // running image crc32
    #expect(Array(bytes[92..<96]) == [0x00, 0x00, 0x10, 0x00])  // receive span 1 MiB
    #expect(Array(bytes[100..<114]) == [UInt8](repeating: 0, count: 14))  // no kept activation
    #expect(bytes.count == 114)
  }

  /// A device from before zstd frames sends 96 bytes: it takes none.
  @Test func aDeviceFromBeforeFramesTakesNone() throws {
    // [P-INFO-2] [P-INFO-30]
    var sample = Self.sample
    sample.maxFrameLength = 1 << 20
    #expect(try InfoRecord(bytes: sample.encoded).maxFrameLength == 1 << 20)
    let info = try InfoRecord(bytes: sample.encoded.prefix(96))
    #expect(info.maxFrameLength == 0)
    #expect(info.receiveSpan == sample.receiveSpan)
  }

  /// A device from before the receive span sends 92 bytes: its span is its window capacity.
  @Test func aDeviceFromBeforeTheSpanStoresOneWindowAhead() throws {
    // [P-INFO-2] [P-INFO-29]
    let info = try InfoRecord(bytes: Self.sample.encoded.prefix(92))
    #expect(info.receiveSpan == 65536)
    #expect(info.runningImageCRC == 0x1234_5678)
  }

  /// A device from before the L2CAP channel sends 78 bytes: it offers no channel (PSM 0).
  @Test func aDeviceFromBeforeTheChannelOffersNone() throws {
    // [P-INFO-2]
    let info = try InfoRecord(bytes: Self.sample.encoded.prefix(78))
    #expect(info.l2capPSM == 0)
    #expect(info.features == .missingRanges)
    #expect(try InfoRecord(bytes: Self.sample.encoded).l2capPSM == 0x81)
  }

  /// A device from before data operations sends at most 80 bytes: it takes none and knows no running
  /// image.
  @Test func aDeviceFromBeforeOperationsTakesNone() throws {
    // [P-INFO-2]
    let info = try InfoRecord(bytes: Self.sample.encoded.prefix(80))
    #expect(info.features == .missingRanges && info.l2capPSM == 0x81)
    #expect(info.maxOperationLength == 0 && info.runningImageSize == 0 && info.runningImageCRC == 0)
    // A partial field is not read: 86 bytes carry the length but not the whole size.
    let partial = try InfoRecord(bytes: Self.sample.encoded.prefix(86))
    #expect(partial.maxOperationLength == 4096 && partial.runningImageSize == 0)
    #expect(try InfoRecord(bytes: Self.sample.encoded) == Self.sample)
  }

  /// A device from before the features field sends 74 bytes: it supports none.
  @Test func aDeviceFromBeforeFeaturesSupportsNone() throws {
    // [P-INFO-2]
    let info = try InfoRecord(bytes: Self.sample.encoded.prefix(74))
    #expect(info.features.isEmpty)
    #expect(info.chunksDropped == 0x0102_0304)
  }

  /// A device from before the dropped-chunk count sends 70 bytes: the count reads as 0.
  @Test func aSeventyByteInfoReadsNoDroppedChunks() throws {
    // [P-INFO-2]
    let info = try InfoRecord(bytes: Self.sample.encoded.prefix(70))
    var expected = Self.sample
    expected.chunksDropped = 0
    expected.features = []
    expected.maxOperationLength = 0
    expected.runningImageSize = 0
    expected.runningImageCRC = 0
    expected.l2capPSM = 0
    expected.receiveSpan = expected.windowCapacity
    #expect(info == expected)
    #expect(try InfoRecord(bytes: Self.sample.encoded.prefix(73)) == expected, "a partial count is not read")
  }

  /// A device from before the outcome's boot count sends 69 bytes: the count reads as 0.
  @Test func theShorterFirstLayoutStillDecodes() throws {
    // [P-INFO-2]
    let info = try InfoRecord(bytes: Self.sample.encoded.prefix(InfoRecord.minimumByteCount))
    var expected = Self.sample
    expected.lastOutcome.attemptsUsed = 0
    expected.chunksDropped = 0
    expected.features = []
    expected.maxOperationLength = 0
    expected.runningImageSize = 0
    expected.runningImageCRC = 0
    expected.l2capPSM = 0
    expected.receiveSpan = expected.windowCapacity
    #expect(info == expected)
  }

  @Test func roundTripsAndIgnoresAppendedFields() throws {
    // [P-INFO-1]
    let bytes = Self.sample.encoded
    #expect(try InfoRecord(bytes: bytes) == Self.sample)
    #expect(try InfoRecord(bytes: bytes + [9, 9, 9]) == Self.sample)
    #expect(Self.sample.runningVersion == Version(major: 1, minor: 1, revision: 2, build: 3))
  }

  @Test func everyTruncationIsRefused() {
    let bytes = Self.sample.encoded
    for cut in 0..<InfoRecord.minimumByteCount {
      #expect(throws: WireError.self) { try InfoRecord(bytes: bytes[0..<cut]) }
    }
  }

  @Test func outOfRangeEnumsAreRefused() {
    // [P-RESP-9]
    for index in [1, 2, 20, 43, 60] {
      var bytes = Self.sample.encoded
      bytes[index] = 0xEE
      #expect(throws: WireError.self, "byte \(index)") { try InfoRecord(bytes: bytes) }
    }
  }

  /// A central reads Info with ATT long reads: at every MTU the pieces reassemble to the same record.
  @Test func longReadsReassembleAtEveryMTU() throws {
    // [P-INFO-3]
    let value = Self.sample.encoded
    for mtu in 23...517 {
      var assembler = LongReadAssembler(mtu: mtu)
      var reads = 0
      while !assembler.isComplete {
        let piece = try LongRead.piece(of: value, at: assembler.nextOffset, mtu: mtu)
        try assembler.add(piece, at: assembler.nextOffset)
        reads += 1
        #expect(reads <= value.count / (mtu - 1) + 1)
      }
      #expect(try InfoRecord(bytes: assembler.value) == Self.sample, "MTU \(mtu)")
    }
  }

  @Test func longReadRefusesBadOffsetsAndPieces() throws {
    // [P-INFO-3]
    let value = Self.sample.encoded
    #expect(throws: WireError.self) { try LongRead.piece(of: value, at: value.count + 1, mtu: 23) }
    #expect(try LongRead.piece(of: value, at: value.count, mtu: 23).isEmpty)
    var assembler = LongReadAssembler(mtu: 23)
    #expect(throws: WireError.self) { try assembler.add(value[0..<22], at: 5) }
    #expect(throws: WireError.self) { try assembler.add(value[0..<23], at: 0) }
  }
}

/// The framing of a packed write (features bit 3): `length u16, operation` repeated.
@Suite struct PackedOperationsFramingTests {
  @Test func entriesSplitAtTheirLengths() throws {
    // [P-PACK-1]
    let first: [UInt8] = [0, 0, 0, 0, 0x02, 1, 0, 0, 0, 9, 0, 0, 0]
    let second: [UInt8] = [9, 0, 0, 0, 0x00, 0xAB]
    let packed = PackedOperations.pack([first, second])
    #expect(packed == [13, 0] + first + [6, 0] + second)
    #expect(try #require(PackedOperations.split(packed)).map(Array.init) == [first, second])
  }

  @Test func aBrokenFramingSplitsIntoNothing() {
    // [P-PACK-3]
    #expect(PackedOperations.split([]) == nil)
    #expect(PackedOperations.split([0, 0, 1]) == nil, "a length of 0")
    #expect(PackedOperations.split([5, 0, 1, 2, 3]) == nil, "a length past the end")
    #expect(PackedOperations.split([1, 0, 7, 9]) == nil, "one byte left over")
  }
}
