/// A control-point request, central to device. Every encoding fits in 20 bytes (ATT MTU 23).
public enum Request: Equatable, Sendable {
  /// Starts a transfer of `size` bytes whose CRC32 is `crc32`, into the inactive slot.
  case prepare(size: UInt32, crc32: UInt32, version: Version)
  case status
  /// Asks the device to check and commit `[offset, offset + length)`.
  case window(offset: UInt32, length: UInt32, crc32: UInt32)
  case validate
  /// `permanent` skips the trial boot (bit 0 of the flags byte).
  case activate(permanent: Bool)
  case abort
  case confirm
  /// Asks for the features in `wanted` that the device supports, for this connection.
  case features(Features)
  /// Asks for the hashes of the running image's blocks `first ..< first + maxCount` (fewer when
  /// the image ends or the answer would not fit) at `blockSize` bytes per block.
  case blockHashes(BlockHashRequest)
  /// Asks the device to activate the validated image on its own within a window of wall-clock
  /// time (Info features bit 5).
  case schedule(ActivationWindow)

  public var opcode: Opcode {
    switch self {
    case .prepare: .prepare
    case .status: .status
    case .window: .window
    case .validate: .validate
    case .activate: .activate
    case .abort: .abort
    case .confirm: .confirm
    case .features: .features
    case .blockHashes: .blockHashes
    case .schedule: .schedule
    }
  }

  /// Decodes one control-point write. Wrong lengths, unknown opcodes and reserved bits all throw.
  public init(bytes: some Collection<UInt8>) throws(WireError) {
    var reader = ByteReader(bytes)
    let rawOpcode = try reader.readU8()
    guard let opcode = Opcode(rawValue: rawOpcode) else { throw .unknownOpcode(rawOpcode) }
    let payloadLength = reader.remaining
    let expected = Request.payloadLength(of: opcode)
    guard payloadLength == expected else {
      throw payloadLength < expected
        ? .truncated(needed: expected, available: payloadLength)
        : .trailingBytes(count: payloadLength - expected)
    }
    switch opcode {
    case .prepare:
      self = .prepare(
        size: try reader.readU32(), crc32: try reader.readU32(), version: try Version(from: &reader))
    case .status: self = .status
    case .window:
      self = .window(offset: try reader.readU32(), length: try reader.readU32(), crc32: try reader.readU32())
    case .validate: self = .validate
    case .activate:
      let flags = try reader.readU8()
      guard flags & ~Request.permanentFlag == 0 else {
        throw .invalidField("ACTIVATE flags 0x\(String(flags, radix: 16)) use reserved bits")
      }
      self = .activate(permanent: flags & Request.permanentFlag != 0)
    case .abort: self = .abort
    case .confirm: self = .confirm
    case .features: self = .features(Features(rawValue: try reader.readU32()))
    case .blockHashes:
      self = .blockHashes(
        BlockHashRequest(
          blockSize: try reader.readU32(), firstBlock: try reader.readU32(), maxCount: try reader.readU8()))
    case .schedule:
      self = .schedule(try ActivationWindow(from: &reader))
    }
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU8(opcode.rawValue)
    switch self {
    case .prepare(let size, let crc32, let version):
      bytes.appendU32(size)
      bytes.appendU32(crc32)
      version.append(to: &bytes)
    case .window(let offset, let length, let crc32):
      bytes.appendU32(offset)
      bytes.appendU32(length)
      bytes.appendU32(crc32)
    case .activate(let permanent):
      bytes.appendU8(permanent ? Request.permanentFlag : 0)
    case .features(let wanted):
      bytes.appendU32(wanted.rawValue)
    case .blockHashes(let request):
      bytes.appendU32(request.blockSize)
      bytes.appendU32(request.firstBlock)
      bytes.appendU8(request.maxCount)
    case .schedule(let window):
      window.append(to: &bytes)
    case .status, .validate, .abort, .confirm:
      break
    }
  }

  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }

  static let permanentFlag: UInt8 = 0x01

  /// The exact payload length after the opcode byte.
  public static func payloadLength(of opcode: Opcode) -> Int {
    switch opcode {
    case .prepare: 4 + 4 + Version.byteCount
    case .window: 12
    case .activate: 1
    case .features: 4
    case .blockHashes: 9
    case .schedule: ActivationWindow.byteCount
    case .status, .validate, .abort, .confirm: 0
    }
  }
}
