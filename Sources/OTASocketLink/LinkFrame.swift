import OTALink
import OTAWire

/// The ATT-shaped units the simulated link carries over a Unix stream socket. On the socket each
/// frame is `length u16` (the bytes after it), `type u8`, then its fields; values are raw bytes.
public enum LinkFrame: Equatable, Sendable {
  /// Central to device: "I want this MTU".
  case hello(mtu: UInt16)
  /// Device to central: the MTU both will use.
  case welcome(mtu: UInt16)
  /// Device to central: another central is connected; the socket closes next.
  case busy
  /// An acknowledged write (ATT Write Request).
  case writeRequest(handle: UInt8, value: [UInt8])
  /// Its answer: 0 for success, else an ATT error code.
  case writeResponse(status: UInt8)
  /// An unacknowledged write (ATT Write Command).
  case writeCommand(handle: UInt8, value: [UInt8])
  /// A read at an offset (ATT Read Blob Request).
  case readRequest(handle: UInt8, offset: UInt16)
  case readResponse(status: UInt8, value: [UInt8])
  case notification(handle: UInt8, value: [UInt8])
  /// One SDU on the simulated L2CAP channel (`LinkConditions.channel`): one data write.
  case sdu([UInt8])

  /// The largest frame body accepted: a 512-byte attribute value plus a few bytes of fields.
  public static let maximumLength = 520
  /// The largest SDU frame body: its kind and an SDU of the device's receive MTU.
  public static let maximumSDULength = 1 + ChannelShape.deviceReceiveMTU

  enum Kind: UInt8 {
    case hello = 0x01, welcome = 0x02, busy = 0x03
    case writeRequest = 0x10, writeResponse = 0x11, writeCommand = 0x12
    case readRequest = 0x13, readResponse = 0x14, notification = 0x15
    case sdu = 0x20
  }

  public var encoded: [UInt8] {
    var body: [UInt8] = []
    switch self {
    case .hello(let mtu):
      body.appendU8(Kind.hello.rawValue)
      body.appendU16(mtu)
    case .welcome(let mtu):
      body.appendU8(Kind.welcome.rawValue)
      body.appendU16(mtu)
    case .busy:
      body.appendU8(Kind.busy.rawValue)
    case .writeRequest(let handle, let value):
      body += [Kind.writeRequest.rawValue, handle] + value
    case .writeResponse(let status):
      body += [Kind.writeResponse.rawValue, status]
    case .writeCommand(let handle, let value):
      body += [Kind.writeCommand.rawValue, handle] + value
    case .readRequest(let handle, let offset):
      body += [Kind.readRequest.rawValue, handle]
      body.appendU16(offset)
    case .readResponse(let status, let value):
      body += [Kind.readResponse.rawValue, status] + value
    case .notification(let handle, let value):
      body += [Kind.notification.rawValue, handle] + value
    case .sdu(let value):
      body += [Kind.sdu.rawValue] + value
    }
    var frame: [UInt8] = []
    frame.reserveCapacity(body.count + 2)
    frame.appendU16(UInt16(body.count))
    return frame + body
  }

  /// Decodes one frame body (without its length prefix).
  init(body: ArraySlice<UInt8>) throws(LinkError) {
    var reader = ByteReader(body)
    let kind: Kind
    do {
      let raw = try reader.readU8()
      guard let known = Kind(rawValue: raw) else {
        throw WireError.invalidField("frame type 0x\(String(raw, radix: 16))")
      }
      kind = known
      switch kind {
      case .hello: self = .hello(mtu: try reader.readU16())
      case .welcome: self = .welcome(mtu: try reader.readU16())
      case .busy: self = .busy
      case .writeRequest: self = .writeRequest(handle: try reader.readU8(), value: Array(reader.readRest()))
      case .writeResponse: self = .writeResponse(status: try reader.readU8())
      case .writeCommand: self = .writeCommand(handle: try reader.readU8(), value: Array(reader.readRest()))
      case .readRequest: self = .readRequest(handle: try reader.readU8(), offset: try reader.readU16())
      case .readResponse: self = .readResponse(status: try reader.readU8(), value: Array(reader.readRest()))
      case .notification: self = .notification(handle: try reader.readU8(), value: Array(reader.readRest()))
      case .sdu: self = .sdu(Array(reader.readRest()))
      }
      if kind != .sdu, body.count > Self.maximumLength {
        throw WireError.invalidField("a frame of \(body.count) bytes")
      }
      try reader.expectEnd()
    } catch {
      throw .protocolViolation("malformed frame: \(error)")
    }
  }
}

/// Cuts a byte stream into frames, whatever pieces it arrives in.
public struct FrameDecoder: Sendable {
  private var buffer: [UInt8] = []
  private var start = 0

  public init() {}

  public mutating func append(_ bytes: some Collection<UInt8>) { buffer.append(contentsOf: bytes) }

  /// Appends raw bytes (a socket's read buffer) with one copy.
  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    buffer.append(contentsOf: bytes.bindMemory(to: UInt8.self))
  }

  /// The next whole frame, or nil until more bytes arrive.
  public mutating func next() throws(LinkError) -> LinkFrame? {
    guard buffer.count - start >= 2 else { return nil }
    let length = Int(buffer[start]) | Int(buffer[start + 1]) << 8
    guard length > 0, length <= LinkFrame.maximumSDULength else {
      throw .protocolViolation("frame length \(length)")
    }
    guard buffer.count - start >= 2 + length else { return nil }
    let frame = try LinkFrame(body: buffer[(start + 2)..<(start + 2 + length)])
    start += 2 + length
    if start > 4096, start * 2 > buffer.count {
      buffer.removeFirst(start)
      start = 0
    }
    return frame
  }
}

/// ATT error codes the simulated link answers with.
public enum ATTError: UInt8, Sendable {
  case invalidHandle = 0x01
  case readNotPermitted = 0x02
  case writeNotPermitted = 0x03
  case invalidOffset = 0x07
  case invalidAttributeValueLength = 0x0D
}
