import Logging
import OTACBOR
import OTAFaults
import OTASMP
import OTASMPServer
import OTASystem
import OTAWire

/// SMP in the daemon's loop: both transports (UDP datagrams, writes to the SMP characteristic)
/// end in `answerSMP`, the one path to the server, the device commands and their consequences.
extension DeviceService {
  /// Answers one whole SMP message from `client` (for the log), handing the answer to `reply`; true
  /// when it asked for a reset (the device restarts after answering).
  func answerSMP(_ message: [UInt8], from client: String, reply: @escaping ([UInt8]) throws -> Void) throws
    -> Bool
  {
    guard var room = smpRoom else { return false }
    let output = try room.answer(message, from: client, host: &host, now: now)
    smpRoom = room
    logStorageFailures()
    if let note = output.note { logger.info("SMP: \(client): \(note)") }
    if let response = output.response {
      let request = (try? SMPHeader(bytes: message)).flatMap {
        FaultRequest.SMPCommandName(group: $0.group, id: $0.command).map(FaultRequest.smp)
      }
      if recordsDataWrites { observe(.smpAnswer(client: client, rc: Self.smpReturnCode(response))) }
      hold(at: .answer(request, .start)) { [logger] in Self.send(response, reply, to: client, logger) }
    }
    if restartIfRunningMarkedBad() { return true }
    if let supervisor = trial, confirmedElsewhere(supervisor) {
      logger.notice("an SMP client confirmed the trial: slot \(host.running) is good")
      _ = try supervise { $0.confirmed() }
      trial = nil
    }
    guard output.restart else { return false }
    restartReason = "SMP reset: \(host.boot.plan)"
    logger.notice("restarting on an SMP reset into \(host.boot.plan)")
    link.disconnect()
    return true
  }

  // MARK: UDP

  /// Answers the waiting SMP datagrams; true when one asked for a reset. A datagram's send or
  /// receive that fails is its peer's loss: logged (the first at warning, the rest at debug) and
  /// counted, never thrown out of the loop.
  func serveSMPOverUDP() throws -> Bool {
    guard let endpoint = smpRoom?.udp, let bufferSize = smp?.bufferSize else { return false }
    return try endpoint.serve(
      maxLength: bufferSize,
      refuse: { bytes, from in
        logger.info("SMP: \(from): a datagram over \(bufferSize) bytes refused")
        return smp?.refuseTooLarge(bytes)
      },
      answer: { bytes, from, reply in try deliver(.smp(bytes, client: "\(from)", central: nil, reply: reply))
      },
      dropped: { noteUDPPeerError($0) })
  }

  /// A UDP peer's datagram that could not be received or answered.
  func noteUDPPeerError(_ error: SystemError) {
    if smpRoom?.notePeerError() == true {
      logger.warning("SMP over UDP: \(error) (a peer's loss; otad goes on; later ones at debug)")
    } else {
      logger.debug("SMP over UDP: \(error) (\(udpPeerErrors) so far)")
    }
  }

  // MARK: Bluetooth

  /// A write to the SMP characteristic: a piece of a message, put together with what the same
  /// central wrote before; each whole message answered in notifications of at most MTU − 3 bytes.
  func receiveSMPWrite(_ bytes: [UInt8], from central: String, mtu: ATTMTU) throws -> Bool {
    guard var room = smpRoom else {
      logger.debug("SMP write ignored: SMP is off", metadata: ["device": "\(central)"])
      return false
    }
    let outcomes = room.receive(bytes, from: central, mtu: mtu, now: now)
    smpRoom = room
    for outcome in outcomes {
      if try answerSMP(outcome, central: central, mtu: mtu) { return true }
    }
    return false
  }

  /// Gives up the partial messages whose central went quiet, answering each as a header whose
  /// length lies is answered.
  func expireSMPFragments() throws -> Bool {
    guard var room = smpRoom, let due = room.bluetooth.nextDeadline, now >= due else { return false }
    let expired = room.bluetooth.expire(now: now)
    smpRoom = room
    for expired in expired {
      if try answerSMP(expired.outcome, central: expired.central, mtu: expired.mtu) { return true }
    }
    return false
  }

  private func answerSMP(_ outcome: SMPBluetoothSessions.Outcome, central: String, mtu: ATTMTU) throws -> Bool
  {
    let reply: ([UInt8]) -> Void = { answer in
      for piece in SMPBluetoothSessions.notifications(answer, mtu: mtu) { self.link.notifySMP(piece) }
    }
    switch outcome {
    case .message(let message):
      return try deliver(.smp(message, client: central, central: central, reply: reply))
    case .tooLarge(let header):
      logger.warning("SMP: \(central): a header announced a message over \(smp?.bufferSize ?? 0) bytes")
      if let answer = smp?.refuseTooLarge(header) { reply(answer) }
      return false
    case .abandoned(let partial):
      logger.warning("SMP: \(central): a message never completed (\(partial.count) bytes arrived)")
      return try deliver(.smp(partial, client: central, central: central, reply: reply))
    }
  }
}

extension DeviceService {
  /// Sends an SMP answer (now, or when a delay a fault asked for is over): a failure to send is
  /// the client's loss, logged, never the daemon's.
  static func send(_ answer: [UInt8], _ reply: ([UInt8]) throws -> Void, to client: String, _ logger: Logger)
  {
    do {
      try reply(answer)
    } catch {
      logger.warning("SMP: \(client): the answer could not be sent: \(error)")
    }
  }

  /// An SMP request as the session report tells it: its command, and an upload's offset and size.
  static func smpActivity(_ message: [UInt8], from client: String) -> DeviceActivity {
    guard let header = try? SMPHeader(bytes: message) else {
      return .smpRequest(client: client, command: "a message without a header", offset: nil, bytes: nil)
    }
    let name =
      FaultRequest.SMPCommandName(group: header.group, id: header.command)?.rawValue
      ?? "group \(header.group) command \(header.command)"
    let command = "\(name) (\(header.operation))"
    guard name == FaultRequest.SMPCommandName.upload.rawValue,
      let body = try? SMPBody(bytes: Array(message.dropFirst(SMPHeader.byteCount)), limits: CBORLimits())
    else { return .smpRequest(client: client, command: command, offset: nil, bytes: nil) }
    return .smpRequest(
      client: client, command: command, offset: (try? body.unsigned("off")) ?? nil,
      bytes: ((try? body.bytes("data")) ?? nil)?.count)
  }

  /// The rc of an SMP answer (v1 `rc`, v2 `err.rc`); nil for none (success).
  static func smpReturnCode(_ answer: [UInt8]) -> UInt64? {
    guard let body = try? SMPBody(bytes: Array(answer.dropFirst(SMPHeader.byteCount)), limits: CBORLimits())
    else { return nil }
    if let rc = (try? body.unsigned("rc")) ?? nil { return rc }
    if case .map(let entries)? = body["err"], let rc = entries.first(where: { $0.key == .text("rc") })?.value,
      case .unsigned(let value) = rc
    {
      return value
    }
    return nil
  }
}
