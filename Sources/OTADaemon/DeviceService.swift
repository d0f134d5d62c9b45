import Logging
import OTABoot
import OTAEngine
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTAStorage
import OTASystem
import OTAWire

/// The daemon's loop: waits on the link (and the stop signals), feeds what the central does to the
/// `ReceiverHost`, sends its answers, keeps its timer. Single-threaded; every storage call happens
/// here, in order.
public final class DeviceService {
  public enum Stop: Equatable, Sendable {
    /// SIGTERM or SIGINT: stop cleanly.
    case signal(Int32)
    /// ACTIVATE was answered: restart into the new slot.
    case restart
  }

  public internal(set) var host: ReceiverHost
  let link: any PeripheralLink
  let logger: Logger
  private let clock = ContinuousClock()
  private let started: ContinuousClock.Instant
  private var timer: Duration?
  var trial: TrialSupervisor?
  private var healthCheck: HealthCheckProcess?
  private let healthEnvironment: [String: String]
  /// Why the device restarts, for the log.
  public internal(set) var restartReason = ""
  /// The storage failure logged last: its repeats (every chunk of a full disk) go to debug.
  private var lastStorageFailure: StorageError?
  /// SMP, when either SMP transport is on: the server, UDP's socket when configured, Bluetooth's
  /// reassembly (its writes come from the link, when the link carries the SMP service).
  var smpRoom: SMPRoom?
  /// The SMP server, when either SMP transport is on.
  public var smp: SMPService? { smpRoom?.service }
  /// UDP datagrams that could not be received or answered (a peer's loss, never the daemon's).
  public var udpPeerErrors: Int { smpRoom?.udpPeerErrors ?? 0 }
  /// Requests whose handling failed (storage, a link's send): each logged, none ends the daemon.
  public internal(set) var requestFailures = 0
  /// Operations rejected before this connection: its first rejection is logged at warning.
  private var rejectedAtConnect = 0
  /// What the device says it is in the Device Information Service (serial, model, hardware
  /// revision); a nil field reads empty.
  public let identity: DeviceIdentity
  /// Told each request, answer, connection and trial step as it happens (`otad run --trace`).
  public var observe: (DeviceActivity) -> Void = { _ in }
  /// Nordic's Legacy and Secure DFU (docs/NORDIC-DFU.md): their sessions and whose each one is.
  var nordic = NordicDFURoom()
  /// The Nordic DFU sessions the configuration serves.
  public var nordicDFU: [NordicDFUService: any NordicDFUSession] {
    get { nordic.sessions }
    set { nordic.sessions = newValue }
  }
  /// Faults on demand (docs/APP-TESTING.md), when the configuration allows them.
  var faults: FaultDecorator?
  /// Each data write is told to `observe` too (`otad run --sessions`): off, a write costs nothing more.
  public var recordsDataWrites = false

  /// `trial` says how a slot on trial proves itself; `healthEnvironment` is what the health check
  /// learns about the trial (OTAD_SLOT, OTAD_VERSION, ...); `identity` is what the Device
  /// Information Service says the device is.
  public init(
    host: ReceiverHost, link: any PeripheralLink, logger: Logger, trial: TrialPolicy = TrialPolicy(),
    healthEnvironment: [String: String] = [:], smp: SMPService? = nil, smpUDP: SMPEndpoint? = nil,
    identity: DeviceIdentity = DeviceIdentity()
  ) {
    self.host = host
    self.identity = identity
    smpRoom = smp.map { SMPRoom(service: $0, udp: smpUDP) }
    self.link = link
    self.logger = logger
    self.healthEnvironment = healthEnvironment
    started = clock.now
    if host.runningOnTrial {
      self.trial = TrialSupervisor(policy: trial)
    } else if host.boot.provisional, host.running == host.boot.confirmed {
      self.trial = TrialSupervisor(policy: trial, subject: .rebuiltState)
    }
  }

  var now: Duration { clock.now - started }

  public func run(stopSignals: StopSignals?) throws -> Stop {
    if var supervisor = trial {
      let failedByFault = supervisor.subject == .trial ? try faultFailsTrial() : false
      let actions =
        failedByFault ? supervisor.failedByFault("a fault asked for it") : supervisor.start(now: now)
      trial = supervisor
      if try carryOut(actions) { return .restart }
    }
    while true {
      let deadline = [
        timer, link.nextDeadline, trial?.nextDeadline, smpRoom?.bluetooth.nextDeadline, faults?.nextDeadline,
      ].compactMap { $0 }.min()
      let descriptors =
        link.descriptors + (stopSignals.map { [$0.descriptor] } ?? [])
        + (healthCheck.map { [$0.descriptor] } ?? [])
        + (smpRoom?.udp.map { [$0.socket.descriptor.rawValue] } ?? [])
        + (faults?.descriptors ?? [])
      let readable = try Poller.wait(
        for: descriptors, writable: link.writeDescriptors, timeout: deadline.map { max(.zero, $0 - now) })
      host.advance(to: now)
      if let stopSignals, readable.contains(stopSignals.descriptor) {
        let signal = stopSignals.take()
        if signal == StopSignals.reload {
          if try reload() { return .restart }
        } else {
          return .signal(signal)
        }
      }
      serveFaultControl(readable: readable)
      releaseHeldAnswers()
      if let check = healthCheck, readable.contains(check.descriptor), let exit = check.reap() {
        healthCheck = nil
        logger.notice("health check ended: \(exit)")
        observe(.healthCheck(passed: exit.succeeded, detail: "\(exit)"))
        if try supervise({ $0.healthCheckEnded(passed: exit.succeeded, "\(exit)") }) { return .restart }
      }
      let events = try link.service(readable: readable, now: now) { characteristic, mtu in
        value(of: characteristic, mtu: mtu)
      }
      for event in events {
        if try servingPeer({ try handle(event) }) || restartIfRunningMarkedBad() { return .restart }
      }
      if let endpoint = smpRoom?.udp, readable.contains(endpoint.socket.descriptor.rawValue),
        try servingPeer(serveSMPOverUDP)
      {
        return .restart
      }
      if try servingPeer(expireSMPFragments) { return .restart }
      if let due = timer, now >= due {
        timer = nil
        if try apply(try host.handle(.tick(now: now))) { return .restart }
      }
      if trial != nil, try supervise({ $0.tick(now: now) }) { return .restart }
    }
  }

  /// One peer's request carried out: whatever it makes fail is that request's loss (logged and
  /// counted), never the daemon's. Only a (simulated) power cut goes on up: then the process is gone.
  func servingPeer(_ body: () throws -> Bool) throws -> Bool {
    do {
      return try body()
    } catch StorageError.powerCut {
      throw StorageError.powerCut
    } catch {
      requestFailures += 1
      logger.error("a request failed: \(error); otad goes on (\(requestFailures) so far)")
      return false
    }
  }

  /// A characteristic's value for a read by a central at `mtu` (the writable ones read empty).
  public func value(of characteristic: Characteristic, mtu: ATTMTU) -> [UInt8] {
    switch characteristic {
    case .info: info(mtu: mtu).encoded
    case .firmwareRevision: Array(host.info().runningVersion.description.utf8)
    case .l2capPSM: [UInt8(truncatingIfNeeded: link.dataChannelPSM), UInt8(link.dataChannelPSM >> 8)]
    case .blockHashes: host.blockHashes().encoded
    case .modelNumber, .serialNumber, .hardwareRevision: Array((identity[characteristic] ?? "").utf8)
    case .controlPoint, .data: []
    }
  }

  /// Info for a central at `mtu`, with the link's L2CAP channel (offset 78).
  public func info(mtu: ATTMTU? = nil) -> InfoRecord {
    var info = host.info(mtu: mtu)
    info.l2capPSM = link.dataChannelPSM
    return info
  }

  // MARK: The trial

  /// Feeds the trial supervisor and carries out what it asks; true when the device must restart.
  func supervise(_ event: (inout TrialSupervisor) -> [TrialSupervisor.Action]) throws -> Bool {
    guard var supervisor = trial else { return false }
    let actions = event(&supervisor)
    trial = supervisor
    return try carryOut(actions)
  }

  private func carryOut(_ actions: [TrialSupervisor.Action]) throws -> Bool {
    for action in actions {
      switch action {
      case .startHealthCheck:
        let command = trial?.policy.healthCheck ?? "false"
        logger.notice("running the health check", metadata: ["command": "\(command)"])
        do {
          healthCheck = try HealthCheckProcess(command: command, environment: healthEnvironment)
        } catch {
          logger.error("the health check could not start: \(error)")
          if try supervise({ $0.healthCheckEnded(passed: false, "\(error)") }) { return true }
        }
      case .stopHealthCheck:
        healthCheck?.kill()
        healthCheck = nil
      case .markGood where trial?.subject == .rebuiltState:
        try host.confirmProvisional()
        trial = nil
        logger.notice(
          "slot \(host.running) proved itself: the rebuilt boot state is confirmed and saved; updates go on")
        observe(.verdict("rebuilt boot state confirmed: slot \(host.running) proved itself"))
      case .stayProvisional(let why):
        if let other = try host.abandonProvisional() {
          restartReason =
            "slot \(host.running) did not prove itself (\(why)): trying slot \(other), which holds a verified image"
          logger.error("\(restartReason)")
          observe(
            .verdict("rebuilt boot state: slot \(host.running) did not prove itself; trying slot \(other)"))
          observe(.restart(reason: restartReason))
          link.disconnect()
          return true
        }
        logger.critical(
          """
          slot \(host.running) did not prove itself (\(why)), and the other slot holds no image that has \
          not failed too: the rebuilt boot state stays provisional and updates are refused until a \
          paired central confirms it (CONFIRM) or `otad mark-good` runs
          """)
        observe(.verdict("rebuilt boot state still provisional: \(why)"))
      case .markGood:
        if try host.markGood() != nil, restartIfRunningMarkedBad() { return true }
        trial = nil
        let outcome = host.boot.outcome
        logger.notice(
          "firmware \(outcome.to) confirmed after \(outcome.attemptsUsed) boot(s): slot \(host.running) is good"
        )
        observe(.verdict("firmware \(outcome.to) confirmed after \(outcome.attemptsUsed) boot(s)"))
      case .failBoot(let reason):
        try host.failTrialBoot(reason)
        observe(
          .verdict(
            host.boot.trial.map { "failed boot (\(reason)), \($0.attemptsLeft) left" }
              ?? "marked bad (\(reason)): rolling back to slot \(host.boot.confirmed)"))
        if let trial = host.boot.trial {
          logger.error(
            "firmware on slot \(host.running): \(reason); \(trial.attemptsLeft) trial boot(s) left")
        } else {
          logger.error(
            "firmware on slot \(host.running) marked bad (\(reason)): rolling back to slot \(host.boot.confirmed)"
          )
        }
      case .restart(let why):
        restartReason = why
        logger.notice("restarting: \(why)")
        observe(.restart(reason: why))
        link.disconnect()
        return true
      }
    }
    return false
  }

  /// What the supervisor waits for has happened some other way (CONFIRM, `otad mark-good`).
  func confirmedElsewhere(_ supervisor: TrialSupervisor) -> Bool {
    supervisor.subject == .trial ? !host.runningOnTrial && !host.runningMarkedBad : !host.boot.provisional
  }

  /// A confirmation found the running trial's seal broken (its slot no longer holds the bytes its
  /// activation checked): it was marked bad instead, and the device restarts into the confirmed
  /// slot. True when the device must restart.
  func restartIfRunningMarkedBad() -> Bool {
    guard host.runningMarkedBad, host.running != host.boot.confirmed else { return false }
    healthCheck?.kill()
    healthCheck = nil
    trial = nil
    restartReason =
      "slot \(host.running) was marked bad (\(host.boot.outcome.reason)): rolling back to slot \(host.boot.confirmed)"
    logger.error("\(restartReason)")
    observe(.verdict("marked bad (\(host.boot.outcome.reason)): rolling back to slot \(host.boot.confirmed)"))
    observe(.restart(reason: restartReason))
    link.disconnect()
    return true
  }

  /// SIGHUP: `otad mark-good` or `mark-bad` changed the boot state.
  private func reload() throws -> Bool {
    logger.info("reloading the boot state")
    let keep = try host.reloadBootState()
    if let supervisor = trial, confirmedElsewhere(supervisor) {
      _ = try supervise { $0.confirmed() }
      trial = nil
    }
    guard keep else {
      restartReason = "slot \(host.running) was marked bad"
      logger.notice("restarting: \(restartReason)")
      observe(.restart(reason: restartReason))
      link.disconnect()
      return true
    }
    return false
  }

  /// Returns true when the device must restart.
  private func handle(_ event: PeripheralEvent) throws -> Bool {
    if faults?.droppedCentral == true {
      // What the dropped central's link still held when a fault dropped it goes with the link.
      switch event {
      case .controlWrite, .dataWrite, .disconnected: return false
      default: break
      }
    }
    switch event {
    case .connected(let mtu):
      faults?.droppedCentral = false
      logger.info("central connected", metadata: ["mtu": "\(mtu)"])
      observe(.connected(mtu: mtu))
      rejectedAtConnect = host.engine.statistics.operationsRejected
      return try apply(try host.handle(.connected(mtu: mtu)))
    case .disconnected:
      return try handleDisconnect()
    case .controlWrite(let bytes):
      return try deliver(.otaControl(bytes))
    case .dataWrite(let bytes):
      return try deliver(.otaData(bytes))
    case .droppedPeer(let why):
      logger.warning("dropped a client: \(why)")
      return false
    case .smpWrite(let central, let mtu, let bytes):
      return try receiveSMPWrite(bytes, from: central, mtu: mtu)
    case .smpCentralGone(let central):
      smpRoom?.bluetooth.forget(central)
      observe(.smpClientGone(client: central))
      logger.debug("SMP central disconnected", metadata: ["device": "\(central)"])
      return false
    case .nordicDFUControl, .nordicDFUPacket, .nordicDFUCentralGone:
      return try receiveNordicDFU(event)
    }
  }

  // MARK: Every message one way

  /// One message of any protocol, the one way every message goes: announced (a request is told to
  /// the log and the observer as it arrives), through the faults on demand, told with its fate (a
  /// data write), then carried out by its protocol. True when the device must restart.
  func deliver(_ message: InboundMessage) throws -> Bool {
    announce(message)
    // Where a data write's bytes go, read before a fault drops its link (and the session with it).
    let dataOffset = dataWriteOffset(message)
    let bytes: [UInt8]
    let fate: DataWriteFate
    switch try passFaults(message) {
    case .restart: return true
    case .lost: (bytes, fate) = ([], .lostByFault)
    case .refused(let answer):
      if let answer { try sendRefusal(answer, for: message) }
      return false
    case .carryOn(let carried, let carriedFate): (bytes, fate) = (carried, carriedFate)
    }
    if recordsDataWrites, let offset = dataOffset { tellDataWrite(message, at: offset, fate) }
    guard fate != .lostByFault else { return false }
    let carried = message.carrying(bytes)
    switch carried {
    case .otaControl(let bytes): return try otaControl(bytes)
    case .otaData(let bytes): return try otaData(bytes)
    case .smp(let bytes, let client, _, let reply): return try answerSMP(bytes, from: client, reply: reply)
    case .nordicControl(let service, let bytes):
      return try serveNordicDFU(service, answeringFailureOf: bytes.first) {
        (device, host) throws(StorageError) in
        try device.control(bytes, host: &host)
      }
    case .nordicPacket(let service, let bytes):
      return try serveNordicDFU(service) { (device, host) throws(StorageError) in
        try device.packet(bytes, host: &host)
      }
    }
  }

  /// A request, told as it arrives (before any fault: a refused request was still asked).
  private func announce(_ message: InboundMessage) {
    switch message {
    case .otaControl(let bytes): logRequest(bytes)
    case .smp(let bytes, let client, _, _):
      if recordsDataWrites { observe(Self.smpActivity(bytes, from: client)) }
    case .nordicControl(let service, let bytes):
      if recordsDataWrites { observe(.nordicDFU(service, Self.nordicDFUCommand(service, bytes))) }
    case .otaData, .nordicPacket: break
    }
  }

  /// Where a data write's bytes go: an OTA chunk's or operation's target, a Nordic packet's place in
  /// the firmware; nil for anything else.
  private func dataWriteOffset(_ message: InboundMessage) -> UInt32? {
    switch message {
    case .otaData(let written): dataWriteStart(written)
    case .nordicPacket(let service, _): nordic.sessions[service]?.firmwareProgress?.received
    case .otaControl, .smp, .nordicControl: nil
    }
  }

  /// A data write, told with what became of it (taken, lost, corrupted by a fault).
  private func tellDataWrite(_ message: InboundMessage, at offset: UInt32, _ fate: DataWriteFate) {
    switch message {
    case .otaData(let written): observe(.dataWrite(offset: offset, bytes: written.count, fate: fate))
    case .nordicPacket(let service, let written):
      observe(.nordicDFUPacket(service, offset: offset, bytes: written.count, fate: fate))
    case .otaControl, .smp, .nordicControl: break
    }
  }

  /// A refusal a fault asked for, sent the way the message's answers go (a delay may hold it).
  private func sendRefusal(_ answer: [UInt8], for message: InboundMessage) throws {
    switch message {
    case .otaControl: sendAnswer(answer)
    case .smp(_, let client, _, let reply):
      hold(at: .answer(nil, .start)) { [logger] in Self.send(answer, reply, to: client, logger) }
    case .nordicControl(let service, let bytes):
      let progress = nordic.progress(service)
      let request = bytes.first.flatMap { Self.faultRequest(service, opcode: $0) }
      hold(at: .answer(request, progress)) { [link] in link.notifyNordicDFU(service, answer) }
    case .otaData, .nordicPacket: break
    }
  }

  /// A control-point request of the OTA protocol, carried out on the host.
  private func otaControl(_ bytes: [UInt8]) throws -> Bool {
    let restart = try apply(try host.handle(.control(bytes, now: now)))
    if let supervisor = trial, confirmedElsewhere(supervisor) {
      logger.notice(
        supervisor.subject == .trial
          ? "the central confirmed the trial: slot \(host.running) is good"
          : "a paired central confirmed the rebuilt boot state: slot \(host.running) is good; updates go on"
      )
      _ = try supervise { $0.confirmed() }
      trial = nil
    }
    return restart
  }

  /// A data write of the OTA protocol, carried out on the host.
  private func otaData(_ bytes: [UInt8]) throws -> Bool {
    let rejectedBefore = host.engine.statistics.operationsRejected
    let restart = try apply(try host.handle(.data(bytes, now: now)))
    logRejectedOperation(since: rejectedBefore)
    return restart
  }

  /// The OTA central went (or a fault dropped it): the counts for the log, and the host told.
  func handleDisconnect() throws -> Bool {
    logger.info(
      "central disconnected",
      metadata: [
        "committed": "\(host.engine.transferStatus.committedOffset)",
        "chunks-dropped": "\(host.engine.statistics.chunksDropped)",
        "missing-reports": "\(host.engine.statistics.missingReports)",
        "spurious-reports": "\(host.engine.statistics.spuriousReports)",
        "operations-applied": "\(host.engine.statistics.operationsApplied)",
        "operations-rejected": "\(host.engine.statistics.operationsRejected)",
        "frames-decoded": "\(host.engine.statistics.framesDecoded)",
        "block-hash-answers": "\(host.engine.statistics.blockHashAnswers)",
        "block-hash-bytes-read": "\(host.engine.statistics.blockHashBytesRead)",
        "reorder-window": "\(host.engine.reorderWindow)",
      ])
    observe(.disconnected(committed: host.engine.transferStatus.committedOffset))
    timer = nil
    lastStorageFailure = nil
    return try apply(try host.handle(.disconnected))
  }

  private func apply(_ outputs: [ReceiverHost.Output]) throws -> Bool {
    logStorageFailures()
    var restart = false
    for output in outputs {
      switch output {
      case .notify(let bytes):
        logResponse(bytes)
        sendAnswer(bytes)
      case .armTimer(let due):
        timer = due
      case .restart:
        restart = true
      }
    }
    if restart {
      restartReason = "ACTIVATE: \(host.boot.plan)"
      logger.notice("restarting into \(host.boot.plan)")
      observe(.restart(reason: restartReason))
      link.disconnect()
    }
    return restart
  }

  /// A data operation that broke a rule (hostile or broken central): the first of a connection at
  /// warning, the rest at debug (a flood must not flood the log), the count at disconnect.
  private func logRejectedOperation(since before: Int) {
    let now = host.engine.statistics.operationsRejected
    guard now > before, let rejection = host.engine.lastRejection else { return }
    if now - rejectedAtConnect == 1 {
      logger.warning("dropped a data operation: \(rejection)")
    } else {
      logger.debug("dropped a data operation: \(rejection)")
    }
  }

  /// Each storage failure with its operation, path and strerror, and what to do: the central only
  /// hears "storage error". A run of the same failure is logged once per connection.
  func logStorageFailures() {
    for failure in host.takeStorageFailures() {
      if failure == lastStorageFailure {
        logger.debug("storage failed again: \(failure)")
      } else {
        logger.error("storage failed: \(failure.explanation)")
        lastStorageFailure = failure
      }
    }
  }

  private func logRequest(_ bytes: [UInt8]) {
    guard let request = try? Request(bytes: bytes) else { return }
    if case .window(let offset, let length, _) = request {
      observe(.request("WINDOW", offset: offset, length: length))
    } else if case .prepare(let size, _, _) = request {
      observe(.request("PREPARE", offset: nil, length: size))
    } else {
      observe(.request("\(request.opcode)", offset: nil, length: nil))
    }
    switch request {
    case .prepare(let size, let crc32, let version):
      logger.info(
        "PREPARE",
        metadata: ["size": "\(size)", "crc32": "\(String(crc32, radix: 16))", "version": "\(version)"])
    case .window(let offset, let length, _):
      logger.debug("WINDOW", metadata: ["offset": "\(offset)", "length": "\(length)"])
    case .blockHashes(let asked):
      // Up to 256 a push: debug, like WINDOW; the disconnect line counts them.
      logger.debug(
        "BLOCK HASHES",
        metadata: [
          "block-size": "\(asked.blockSize)", "first": "\(asked.firstBlock)",
          "max-count": "\(asked.maxCount)",
        ])
    default:
      logger.info("\(request.opcode)")
    }
  }

  private func logResponse(_ bytes: [UInt8]) {
    guard let response = try? Response(bytes: bytes) else { return }
    let name =
      Opcode(rawValue: response.requestOpcode)?.description
      ?? "0x\(String(response.requestOpcode, radix: 16))"
    observeResponse(name, response)
    if response.status == .success {
      if case .offset(let offset) = response.payload {
        logger.debug("\(name) committed", metadata: ["offset": "\(offset)"])
      } else if case .blockHashes(let page) = response.payload {
        logger.debug(
          "\(name) answered",
          metadata: [
            "first": "\(page.firstBlock)", "hashes": "\(page.hashes.count)", "total": "\(page.totalBlocks)",
          ])
      } else {
        logger.info("\(name) succeeded")
      }
    } else {
      let judged =
        response.requestOpcode == Opcode.validate.rawValue
        || response.requestOpcode == Opcode.activate.rawValue
      if judged, let reason = host.lastImageRejection {
        // The status says little; the reason is what the device's owner needs.
        logger.warning("\(name) refused the image: \(reason)")
      } else if response.status == .busy, let holder = host.transaction.lease?.owner, holder != .ota {
        logger.warning("\(name) refused: \(holder) is updating the device (one protocol at a time)")
      } else {
        logger.warning("\(name) answered \(response.status)", metadata: ["payload": "\(response.payload)"])
      }
    }
  }
}

extension DeviceService {
  /// An answer, for the observer: the committed offset a window or STATUS answer carries, and the
  /// reason VALIDATE or ACTIVATE refused the image.
  fileprivate func observeResponse(_ name: String, _ response: Response) {
    var offset: UInt32?
    switch response.payload {
    case .offset(let committed): offset = committed
    case .status(let status): offset = status.committedOffset
    default: offset = nil
    }
    let judged =
      response.requestOpcode == Opcode.validate.rawValue || response.requestOpcode == Opcode.activate.rawValue
    observe(
      .response(
        name, status: "\(response.status)", offset: offset,
        reason: response.status != .success && judged ? host.lastImageRejection.map { "\($0)" } : nil))
  }
}
