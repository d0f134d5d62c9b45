/// What STATUS reports, and what Info embeds: the transfer in progress.
public struct TransferStatus: Equatable, Sendable {
  public static let byteCount = 13
  public var state: DeviceState
  public var size: UInt32
  public var crc32: UInt32
  public var committedOffset: UInt32

  public init(state: DeviceState, size: UInt32, crc32: UInt32, committedOffset: UInt32) {
    self.state = state
    self.size = size
    self.crc32 = crc32
    self.committedOffset = committedOffset
  }

  public static let idle = TransferStatus(state: .idle, size: 0, crc32: 0, committedOffset: 0)

  init(from reader: inout ByteReader) throws(WireError) {
    let rawState = try reader.readU8()
    guard let state = DeviceState(rawValue: rawState) else {
      throw .invalidField("device state \(rawState)")
    }
    self.init(
      state: state, size: try reader.readU32(), crc32: try reader.readU32(),
      committedOffset: try reader.readU32())
  }

  func append(to bytes: inout [UInt8]) {
    bytes.appendU8(state.rawValue)
    bytes.appendU32(size)
    bytes.appendU32(crc32)
    bytes.appendU32(committedOffset)
  }
}

/// A control-point response, device to central (a notification): `0x60, request op, status, payload`.
public struct Response: Equatable, Sendable {
  /// The opcode of the request answered. Raw, because an unknown opcode is echoed back as it came.
  public var requestOpcode: UInt8
  public var status: StatusCode
  public var payload: Payload

  public enum Payload: Equatable, Sendable {
    case none
    /// PREPARE's success: how many bytes may be in flight past the committed offset, and chunk size.
    case prepared(windowCapacity: UInt32, maxChunkPayload: UInt16)
    /// STATUS's success.
    case status(TransferStatus)
    /// WINDOW's answer, success or not: the committed offset, or on failure where to resend from.
    case offset(UInt32)
    /// FEATURES's success: the features now in use on this connection.
    case features(Features)
    /// BLOCK HASHES's success: a page of the running image's block hashes.
    case blockHashes(BlockHashPage)
    /// ACTIVATE's `deferred` answer: what holds the activation, when to ask again.
    case deferral(ActivationDeferral)
  }

  public init(requestOpcode: UInt8, status: StatusCode, payload: Payload = .none) {
    self.requestOpcode = requestOpcode
    self.status = status
    self.payload = payload
  }

  public init(_ opcode: Opcode, _ status: StatusCode, _ payload: Payload = .none) {
    self.init(requestOpcode: opcode.rawValue, status: status, payload: payload)
  }

  public init(bytes: some Collection<UInt8>) throws(WireError) {
    var reader = ByteReader(bytes)
    let marker = try reader.readU8()
    guard marker == Opcode.responseMarker else {
      throw .invalidField("response marker 0x\(String(marker, radix: 16))")
    }
    requestOpcode = try reader.readU8()
    let rawStatus = try reader.readU8()
    guard let status = StatusCode(rawValue: rawStatus) else {
      throw .invalidField("status 0x\(String(rawStatus, radix: 16))")
    }
    self.status = status
    switch (Opcode(rawValue: requestOpcode), status) {
    case (.prepare, .success):
      payload = .prepared(windowCapacity: try reader.readU32(), maxChunkPayload: try reader.readU16())
    case (.status, .success):
      payload = .status(try TransferStatus(from: &reader))
    case (.window, _):
      payload = .offset(try reader.readU32())
    case (.features, .success):
      payload = .features(Features(rawValue: try reader.readU32()))
    case (.blockHashes, .success):
      payload = .blockHashes(try BlockHashPage(from: &reader))
    case (.activate, .deferred):
      payload = .deferral(try ActivationDeferral(from: &reader))
    default:
      payload = .none
    }
    try reader.expectEnd()
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU8(Opcode.responseMarker)
    bytes.appendU8(requestOpcode)
    bytes.appendU8(status.rawValue)
    switch payload {
    case .none: break
    case .prepared(let windowCapacity, let maxChunkPayload):
      bytes.appendU32(windowCapacity)
      bytes.appendU16(maxChunkPayload)
    case .status(let status): status.append(to: &bytes)
    case .offset(let offset): bytes.appendU32(offset)
    case .features(let features): bytes.appendU32(features.rawValue)
    case .blockHashes(let page): page.append(to: &bytes)
    case .deferral(let deferral): deferral.append(to: &bytes)
    }
  }

  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }
}
