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
  var timer: Duration?
  /// When the kept activation is looked at next (`lookAtKeptActivation`), and what was last said of it.
  var nextActivationLook: Duration?
  var lastActivationLine: String?
  /// The owner's command told of each change of the kept activation (`[activation] notify`), and
  /// its process while it runs.
  public var activationNotify: String?
  var activationNotifier: ChildProcessID?
  var trial: TrialSupervisor?
  var healthCheck: HealthCheckProcess?
  let healthEnvironment: [String: String]
  /// Why the device restarts, for the log.
  public internal(set) var restartReason = ""
  /// The storage failure logged last: its repeats (every chunk of a full disk) go to debug.
  var lastStorageFailure: StorageError?
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
  var rejectedAtConnect = 0
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
        activationDeadline,
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
        // A WINDOW's grace ran out: the request of a peer like any other.
        if try servingPeer({ try apply(try host.handle(.tick(now: now))) }) { return .restart }
      }
      if trial != nil, try supervise({ $0.tick(now: now) }) { return .restart }
      if try servingPeer(lookAtKeptActivation) { return .restart }
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

  func handle(_ event: PeripheralEvent) throws -> Bool {
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
      smpRoom?.centralGone(central, host: &host)
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

}
