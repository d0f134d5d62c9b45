import OTAChecksum
import OTAEngine
import OTAWire

/// Turning input bytes into what a central, a clock, a radio and a power supply do. Requests and
/// chunks are aimed near the engine's committed offset, so most inputs get past the first window.
extension ReceiverFuzzRun {
  mutating func step(_ input: inout FuzzInput) {
    let choice = input.byte()
    // While an IO is in flight its completion is the likeliest step, as on a device.
    if pending != nil, choice < 144 {
      return complete(fate(choice))
    }
    now += .milliseconds(Int(choice & 3))
    switch choice % 16 {
    case 0...3:
      if engine.enabledFeatures.contains(.operations), input.byte() < 200 {
        operation(&input)
      } else {
        chunk(&input)
      }
    case 4, 5: window(&input)
    case 6: send(.validate)
    case 7: send(.activate(permanent: input.bool()))
    case 8: prepare(&input)
    case 9: send(input.pick([.status, .abort, .confirm, .validate, .features(.all), .features(.operations)]))
    case 10: rawControl(&input)
    case 11: deliver(.data(input.bytes(input.int(in: 0...12)), now: now))
    case 12:
      now += .milliseconds(input.int(in: 0...700))
      deliver(.tick(now: now))
    case 13: connection(&input)
    case 14: reboot(applyingPending: input.bool())
    default: complete(fate(input.byte()))
    }
  }

  private func fate(_ choice: UInt8) -> IOFate {
    switch choice % 16 {
    case 0: .fail
    case 1: .failTorn
    case 2: .judgeInvalid
    default: .succeed
    }
  }

  private var committed: Int { Int(engine.transferStatus.committedOffset) }
  private var size: Int { Int(engine.transferStatus.size) }

  private mutating func send(_ request: Request) { deliver(.control(request.encoded, now: now)) }

  private mutating func prepare(_ input: inout FuzzInput) {
    let capacity = Int(configuration.slotCapacity)
    let size = input.byte() < 200 ? input.int(in: 1...capacity) : input.int(in: 0...capacity + 2)
    let crc32 = input.byte() < 230 ? image.crc32(0..<size) : input.u32()
    send(.prepare(size: UInt32(size), crc32: crc32, version: Version(major: 2, minor: 0, revision: 0)))
  }

  /// Image bytes at an offset near the committed one, now and then corrupted or far off.
  private mutating func chunk(_ input: inout FuzzInput) {
    let mode = input.byte()
    let maxPayload = Int(engine.maxChunkPayload)
    let offset: Int =
      mode < 200
      ? committed + input.int(in: 0...min(Int(configuration.receiveSpan), 4200))
      : mode < 240 ? max(0, committed - input.int(in: 1...8)) : Int(input.u32())
    let length = input.byte() < 220 ? input.int(in: 1...maxPayload) : input.int(in: 0...600)
    var payload = image.bytes(offset..<offset + length)
    if mode % 29 == 28, !payload.isEmpty { payload[Int(mode) % payload.count] ^= 0x5a }
    var bytes: [UInt8] = []
    bytes.appendU32(UInt32(truncatingIfNeeded: offset))
    bytes += payload
    deliver(.data(bytes, now: now))
  }

  /// A data operation (features bit 1 on) near the committed offset: each kind, well formed or
  /// with lying lengths, offsets and sources, or a byte flipped anywhere.
  private mutating func operation(_ input: inout FuzzInput) {
    let mode = input.byte()
    let offset =
      mode < 220
      ? committed + input.int(in: 0...min(Int(configuration.receiveSpan), 4200)) : Int(input.u32())
    let length = input.byte() < 220 ? input.int(in: 1...600) : input.int(in: 0...70_000)
    let target = image.bytes(offset..<offset + min(length, 4096))
    let source = input.byte() < 200 ? UInt32(input.int(in: 0...Int(configuration.slotCapacity))) : input.u32()
    let claimed = input.byte() < 220 ? UInt32(length) : input.u32()
    let start = UInt32(truncatingIfNeeded: offset)
    let body: DataOperation.Body
    switch input.byte() % 5 {
    case 0: body = .raw(target[...])
    case 1: body = .deflate(length: claimed, compressed: RawDeflate.compress(target)[...])
    case 2: body = .copy(source: source, length: claimed)
    case 3:
      let differences = (0..<min(length, 4096)).map { _ in input.byte() < 200 ? 0 : input.byte() }
      body = .patch(source: source, length: claimed, differences: RawDeflate.compress(differences)[...])
    default:
      deliver(.data(input.bytes(input.int(in: 0...40)), now: now))
      return
    }
    var bytes = DataOperation(offset: start, body: body).encoded
    if engine.enabledFeatures.contains(.packedOperations) {
      // Packed (features bit 3): this operation, sometimes after a copy of the one just before
      // it, sometimes a broken framing (the flip below may hit a length).
      bytes = PackedOperations.pack(mode % 3 == 0 ? [bytes, bytes] : [bytes])
    }
    if mode % 31 == 30, !bytes.isEmpty { bytes[Int(input.byte()) % bytes.count] ^= 0x5a }
    deliver(.data(bytes, now: now))
  }

  /// A WINDOW from the committed offset with the image's CRC32, or one a little wrong.
  private mutating func window(_ input: inout FuzzInput) {
    let mode = input.byte()
    let offset = mode < 200 ? committed : mode < 230 ? committed + input.int(in: -4...64) : Int(input.u32())
    let fullLength = min(Int(configuration.windowCapacity), max(0, size - offset))
    let length = input.byte() < 180 ? max(1, fullLength) : input.int(in: 0...fullLength + 8)
    let start = max(0, offset)
    let crc32 = mode % 23 == 0 ? input.u32() : image.crc32(start..<start + max(0, length))
    send(
      .window(
        offset: UInt32(truncatingIfNeeded: start), length: UInt32(truncatingIfNeeded: length), crc32: crc32))
  }

  /// A real opcode with a payload of the wrong length, or any bytes at all.
  private mutating func rawControl(_ input: inout FuzzInput) {
    let opcode = input.byte() < 200 ? input.pick(Opcode.allCases).rawValue : input.byte()
    let length = input.int(in: 0...21)
    deliver(.control([opcode] + input.bytes(length), now: now))
  }

  private mutating func connection(_ input: inout FuzzInput) {
    if input.bool() {
      deliver(
        .connected(
          mtu: ATTMTU(
            clamping: input.byte() < 200 ? input.int(in: 0...600) : Int(Int32(bitPattern: input.u32())))))
    } else {
      mayGoUnanswered += answersOwed
      answersOwed = 0
      deliver(.disconnected)
    }
  }
}
