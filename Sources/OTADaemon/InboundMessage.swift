import OTACBOR
import OTAFaults
import OTALink
import OTASMP
import OTAWire

/// One message a peer sent, whatever its protocol, as the daemon's loop delivers it: every message
/// passes the same way (announced, through the faults on demand, then to its protocol's room), so
/// that faults are one decorator of the messages, not hooks in each protocol.
enum InboundMessage {
  /// A write to the OTA control point.
  case otaControl([UInt8])
  /// A write to the OTA data characteristic (or an L2CAP SDU).
  case otaData([UInt8])
  /// A whole SMP message, from `client` (a UDP address, or a central), over Bluetooth from
  /// `central`; `reply` sends its answer back the way it came.
  case smp([UInt8], client: String, central: String?, reply: ([UInt8]) throws -> Void)
  /// A write to a Nordic DFU service's control point or packet characteristic.
  case nordicControl(NordicDFUService, [UInt8])
  case nordicPacket(NordicDFUService, [UInt8])

  var bytes: [UInt8] {
    switch self {
    case .otaControl(let bytes), .otaData(let bytes), .smp(let bytes, _, _, _), .nordicControl(_, let bytes),
      .nordicPacket(_, let bytes):
      bytes
    }
  }

  /// The same message with other bytes (a fault flipped one).
  func carrying(_ bytes: [UInt8]) -> InboundMessage {
    switch self {
    case .otaControl: .otaControl(bytes)
    case .otaData: .otaData(bytes)
    case .smp(_, let client, let central, let reply):
      .smp(bytes, client: client, central: central, reply: reply)
    case .nordicControl(let service, _): .nordicControl(service, bytes)
    case .nordicPacket(let service, _): .nordicPacket(service, bytes)
    }
  }
}

/// What a fault on demand sees of one message: the request it is (faults due at a command), the
/// image bytes it carries (data faults: lose, corrupt), and how its protocol refuses it. Built by
/// each protocol's own description below: the faults know no protocol.
struct FaultView {
  /// The command, and how far the transfer has come.
  var request: (FaultRequest, FaultBook.Progress)?
  /// Where the image bytes it carries end, for data faults; nil when it carries none.
  var data: FaultBook.Progress?
  /// The message with one image byte flipped (corrupt-chunk); nil: it stays as it is.
  var corrupted: ([UInt8]) -> [UInt8]? = { bytes in
    guard !bytes.isEmpty else { return nil }
    var flipped = bytes
    flipped[flipped.count - 1] ^= 0x5A
    return flipped
  }
  /// The protocol's own answer refusing it with a status (or rc); nil: a refusal loses it.
  var refusal: (UInt8) -> [UInt8]? = { _ in nil }
  /// The moment the refusal answers, for a delay fault.
  var refusalMoment: FaultBook.Moment = .answer(nil, .start)
}

/// What the faults that fired left of a message.
enum FaultOutcome {
  /// Carry it on (perhaps with a byte flipped: the fate says).
  case carryOn([UInt8], DataWriteFate)
  /// It is lost (lose-chunk, or the link dropped under it).
  case lost
  /// Refused: this answer goes back (nil: none), the message is not carried out.
  case refused([UInt8]?)
  /// The device restarts.
  case restart
}

extension FaultView {
  /// A control-point request of the OTA protocol, refused with its status in an OTA answer.
  static func otaRequest(_ bytes: [UInt8], progress: FaultBook.Progress) -> FaultView? {
    guard let opcode = bytes.first.flatMap(Opcode.init(rawValue:)) else { return nil }
    var view = FaultView(request: (.ota(opcode), progress))
    view.refusal = { status in
      Response(requestOpcode: opcode.rawValue, status: StatusCode(rawValue: status) ?? .busy).encoded
    }
    view.refusalMoment = .answer(.ota(opcode), progress)
    return view
  }

  /// An OTA data write whose target bytes start at `start`, of an image of `size` bytes (0: none
  /// prepared).
  static func otaData(_ bytes: [UInt8], start: UInt32?, size: UInt32) -> FaultView? {
    guard let start else { return nil }
    let end = UInt64(start) + UInt64(max(1, bytes.count - DataChunk.headerSize))
    return FaultView(data: FaultBook.Progress(end: end, imageSize: size > 0 ? UInt64(size) : nil))
  }

  /// An SMP request: its command's name; an upload chunk's bytes as data (`imageSize` is what its
  /// first chunk announced, remembered by the caller). Refused with an SMP v1 `{"rc": N}` answer.
  static func smp(_ message: [UInt8], imageSize: inout UInt64?) -> FaultView? {
    guard let header = try? SMPHeader(bytes: message), header.operation.isRequest,
      let name = FaultRequest.SMPCommandName(group: header.group, id: header.command)
    else { return nil }
    var view = FaultView(request: (.smp(name), FaultBook.Progress(end: 0, imageSize: imageSize)))
    view.refusal = { rc in smpRefusal(message, rc: rc) }
    if name == .upload, header.operation == .write,
      let body = try? SMPBody(bytes: Array(message.dropFirst(SMPHeader.byteCount)), limits: CBORLimits())
    {
      let offset = (try? body.unsigned("off")) ?? nil ?? 0
      if offset == 0, let length = (try? body.unsigned("len")) ?? nil { imageSize = length }
      let count = ((try? body.bytes("data")) ?? nil)?.count ?? 0
      let progress = FaultBook.Progress(end: offset + UInt64(max(1, count)), imageSize: imageSize)
      view.request = (.smp(name), progress)
      view.data = progress
      view.corrupted = { _ in flippingUploadByte(header, body.entries) }
    }
    return view
  }

  /// A Nordic DFU control-point command, refused as the service answers (`[0x10, opcode, status]`,
  /// `[0x60, opcode, result]`).
  static func nordicControl(_ service: NordicDFUService, _ bytes: [UInt8], progress: FaultBook.Progress)
    -> FaultView?
  {
    guard let opcode = bytes.first, let request = DeviceService.faultRequest(service, opcode: opcode) else {
      return nil
    }
    var view = FaultView(request: (request, progress))
    view.refusal = { status in [service == .legacy ? 0x10 : 0x60, opcode, status] }
    view.refusalMoment = .answer(request, progress)
    return view
  }

  /// A Nordic DFU firmware packet, while the firmware arrives (`received` of `size` bytes so far).
  static func nordicPacket(_ bytes: [UInt8], progress: (received: UInt32, size: UInt32)?) -> FaultView? {
    guard !bytes.isEmpty, let progress else { return nil }
    return FaultView(
      data: FaultBook.Progress(
        end: UInt64(progress.received) + UInt64(bytes.count), imageSize: UInt64(progress.size)))
  }

  /// The upload with the last byte of its data flipped, its header unchanged (the body keeps its
  /// length); nil when it carries no data.
  static func flippingUploadByte(_ header: SMPHeader, _ entries: [CBOR.Entry]) -> [UInt8]? {
    var entries = entries
    guard let index = entries.firstIndex(where: { $0.key == .text("data") }),
      case .bytes(var data) = entries[index].value, !data.isEmpty
    else { return nil }
    data[data.count - 1] ^= 0x5A
    entries[index].value = .bytes(data)
    return header.encoded + CBOR.map(entries).encoded
  }

  /// An SMP error answer with `rc` to `message` (Zephyr's SMP v1 `{"rc": N}`).
  static func smpRefusal(_ message: [UInt8], rc: UInt8) -> [UInt8]? {
    guard let request = try? SMPHeader(bytes: message) else { return nil }
    return SMPMessage.encoded(
      request.operation.response, version: min(request.version, 1), group: request.group,
      command: request.command, sequence: request.sequence,
      .map([CBOR.Entry(.text("rc"), .unsigned(UInt64(rc)))]))
  }
}
