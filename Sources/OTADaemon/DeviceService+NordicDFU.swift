import OTAEngine
import OTAFaults
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTAStorage

/// Nordic's Legacy and Secure DFU in the daemon's loop (docs/NORDIC-DFU.md): their writes carried
/// out on the receiver host, their notifications sent, an activation a restart into the trial.
extension DeviceService {
  /// One write (or the central's going) of a Nordic DFU service; true when the device must restart.
  func receiveNordicDFU(_ event: PeripheralEvent) throws -> Bool {
    switch event {
    case .nordicDFUControl(let service, let central, let bytes):
      guard admitNordicDFUWrite(service, from: central) else { return false }
      return try deliver(.nordicControl(service, bytes))
    case .nordicDFUPacket(let service, let central, let bytes):
      guard admitNordicDFUWrite(service, from: central) else { return false }
      return try deliver(.nordicPacket(service, bytes))
    case .nordicDFUCentralGone(let service, let central):
      // Only the session's own central ends it by going.
      guard let output = nordic.gone(service, central: central, host: &host) else { return false }
      if recordsDataWrites { observe(.nordicDFUGone(service)) }
      return try carryOut(output, of: service)
    default:
      return false
    }
  }

  /// Whether a write from `central` belongs to the service's session (`NordicDFURoom.admit`): a
  /// dropped one is logged (the first of each central's at warning).
  func admitNordicDFUWrite(_ service: NordicDFUService, from central: String) -> Bool {
    switch nordic.admit(service, from: central, now: now, host: &host) {
    case .admit:
      return true
    case .refused(let line, let warn):
      if warn { logger.warning("\(line)") } else { logger.debug("\(line)") }
      return false
    }
  }

  /// Runs one step of a Nordic DFU session (`NordicDFURoom.step`) and carries out what it answered;
  /// true when the device must restart.
  func serveNordicDFU(
    _ service: NordicDFUService, answeringFailureOf opcode: UInt8? = nil,
    _ step: (inout any NordicDFUSession, inout ReceiverHost) throws(StorageError) -> NordicDFUOutput
  ) throws -> Bool {
    guard let output = try nordic.step(service, answeringFailureOf: opcode, host: &host, step) else {
      return false
    }
    return try carryOut(output, of: service)
  }

  /// A session's output: its notes told and logged, its notifications sent (a delay fault may hold
  /// them), its restart carried out.
  private func carryOut(_ output: NordicDFUOutput, of service: NordicDFUService) throws -> Bool {
    if recordsDataWrites {
      if let note = output.note { observe(.nordicDFU(service, note)) }
      for notification in output.notifications where !Self.isReceipt(service, notification) {
        observe(.nordicDFU(service, "answered " + notification.map { Self.hex($0) }.joined(separator: " ")))
      }
    }
    logStorageFailures()
    if let note = output.note { logger.notice("\(service.rawValue): \(note)") }
    let progress = nordic.progress(service)
    for notification in output.notifications {
      hold(at: .answer(Self.faultRequest(service, answering: notification), progress)) { [link] in
        link.notifyNordicDFU(service, notification)
      }
    }
    guard output.restart else { return false }
    restartReason = "\(service.rawValue): \(host.boot.plan)"
    logger.notice("restarting into \(host.boot.plan)")
    observe(.restart(reason: restartReason))
    link.disconnect()
    return true
  }

  // MARK: Faults on demand (docs/APP-TESTING.md)

  /// The request a notification answers, for `delay` faults: a Legacy DFU command (a packet receipt
  /// as RECEIVE FIRMWARE's), a Secure DFU one (a packet receipt as CALCULATE CHECKSUM's).
  static func faultRequest(_ service: NordicDFUService, answering notification: [UInt8]) -> FaultRequest? {
    if service == .legacy, notification.first == 0x11 { return .nordic(.receive) }
    return notification.dropFirst().first.flatMap { faultRequest(service, opcode: $0) }
  }

  /// A control-point command's fault name, by its service and opcode.
  static func faultRequest(_ service: NordicDFUService, opcode: UInt8) -> FaultRequest? {
    switch service {
    case .legacy: FaultRequest.NordicCommandName(opcode: opcode).map(FaultRequest.nordic)
    case .secure: FaultRequest.SecureDFUCommandName(opcode: opcode).map(FaultRequest.secureDFU)
    }
  }

  /// A packet receipt (Legacy's 0x11; Secure's checksum notifications are answers): not a session line.
  static func isReceipt(_ service: NordicDFUService, _ notification: [UInt8]) -> Bool {
    service == .legacy && notification.first == 0x11
  }

  /// A Nordic DFU central is dropped as a fault asked: its session learns it now (what its link
  /// still delivers finds no session under way), and the link drops it.
  func dropNordicDFUCentral(_ service: NordicDFUService) throws {
    let (output, central) = nordic.drop(service, host: &host)
    if let output { _ = try carryOut(output, of: service) }
    if let central { link.disconnect(central: central) }
  }
}

extension DeviceService {
  static func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16)
    return "0x" + (digits.count == 1 ? "0" : "") + digits
  }

  /// A Nordic DFU command as the session report tells it: its name and what it carries.
  static func nordicDFUCommand(_ service: NordicDFUService, _ bytes: [UInt8]) -> String {
    service == .legacy ? legacyDFUCommand(bytes) : secureDFUCommand(bytes)
  }

  static func legacyDFUCommand(_ bytes: [UInt8]) -> String {
    let argument = bytes.dropFirst()
    switch bytes.first {
    case 0x01: return "START DFU, image type \(argument.first.map { "\($0)" } ?? "none")"
    case 0x02:
      return argument.first == 0x00 ? "INIT DFU PARAMS: the init packet begins" : "INIT DFU PARAMS: complete"
    case 0x03: return "RECEIVE FIRMWARE"
    case 0x04: return "VALIDATE"
    case 0x05: return "ACTIVATE AND RESET"
    case 0x06: return "SYS RESET"
    case 0x08:
      let count = bytes.count == 3 ? Int(bytes[1]) | Int(bytes[2]) << 8 : 0
      return "PACKET RECEIPT NOTIF REQ, every \(count) packets"
    default: return "control write " + bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: " ")
    }
  }

  static func secureDFUCommand(_ bytes: [UInt8]) -> String {
    let argument = Array(bytes.dropFirst())
    func object(_ type: UInt8?) -> String {
      type == 0x01 ? "command object" : type == 0x02 ? "data object" : "object"
    }
    func u32(_ at: Int) -> UInt32 {
      argument.count >= at + 4 ? (0..<4).reduce(0) { $0 | UInt32(argument[at + $1]) << (8 * $1) } : 0
    }
    switch bytes.first {
    case 0x00: return "PROTOCOL VERSION"
    case 0x01: return "CREATE \(object(argument.first)) of \(u32(1)) bytes"
    case 0x02:
      let count = argument.count == 2 ? Int(argument[0]) | Int(argument[1]) << 8 : 0
      return "SET PRN, a checksum every \(count) packets"
    case 0x03: return "CALCULATE CHECKSUM"
    case 0x04: return "EXECUTE"
    case 0x06: return "SELECT \(object(argument.first))"
    case 0x0C: return "ABORT"
    default: return "control write " + bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: " ")
    }
  }
}
