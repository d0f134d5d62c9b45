import Logging
import OTACBOR
import OTAFaults
import OTASMP
import OTAStorage
import OTASystem
import OTAWire

/// Faults on demand (docs/APP-TESTING.md) as a decorator of the daemon's messages: every message a
/// peer sends passes it at one place (`DeviceService.passFaults`, with its protocol's `FaultView`),
/// and every answer goes out through it (`hold`), so that no protocol carries a fault hook of its
/// own; the one hook in the host is a failed slot write (`ReceiverHost.injectedWriteFailure`). It
/// holds the book of faults asked for, the fault control's socket, and the answers a delay holds
/// back. Present only when the configuration allows faults.
final class FaultDecorator {
  var book: FaultBook
  let store: FaultStore
  let control: FaultControlSocket?
  /// Answers a delay holds, in the order they were to go: each goes at its time, none before one
  /// held ahead of it.
  var held: [(due: Duration, send: () -> Void)] = []
  /// A fault dropped the OTA central: what its link still delivers is dropped too, until the next
  /// connection.
  var droppedCentral = false
  /// The size of the image an SMP upload announced in its first piece (`len`).
  var smpImageSize: UInt64?

  init(book: FaultBook, store: FaultStore, control: FaultControlSocket?) {
    self.book = book
    self.store = store
    self.control = control
  }

  /// Loads the book kept in the state directory, lays the configuration's faults over it, saves it,
  /// and opens the fault control (a failure to open it is logged: the configured faults still hold).
  static func open(stateDirectory: String, configured: [Fault], logger: Logger) -> FaultDecorator {
    let store = FaultStore(stateDirectory: stateDirectory)
    var book = store.load(logger: logger)
    book.setConfigured(configured)
    store.save(book, logger: logger)
    var control: FaultControlSocket?
    do {
      control = try FaultControlSocket(stateDirectory: stateDirectory)
    } catch {
      logger.error("the fault control could not open (\(error)): `otad fault` will not reach this daemon")
    }
    logger.warning(
      "faults on demand are allowed (a test device, docs/APP-TESTING.md): \(book.entries.count) set",
      metadata: ["control": "\(control?.path ?? "none")"])
    for entry in book.entries { logger.notice("fault \(entry.id): \(entry.fault) (fired \(entry.fired))") }
    return FaultDecorator(book: book, store: store, control: control)
  }

  var nextDeadline: Duration? { [held.first?.due, control?.nextDeadline].compactMap { $0 }.min() }

  var descriptors: [Int32] { control?.descriptors ?? [] }
}

extension DeviceService {
  /// Allows faults on demand (docs/APP-TESTING.md): the book kept in `stateDirectory` with
  /// `configured` laid over it, and the fault control's socket there.
  public func allowFaults(stateDirectory: String, configured: [Fault]) {
    faults = FaultDecorator.open(stateDirectory: stateDirectory, configured: configured, logger: logger)
  }

  /// Closes the fault control (its socket file goes).
  public func closeFaultControl() { faults?.control?.close() }

  /// What the faults that fired ask of a request or a data write, the strongest first.
  enum FaultVerdict: Equatable {
    /// Nothing fired that stops it: carry it out (perhaps with its bytes changed).
    case carryOn
    /// It is lost (lose-chunk, or the link dropped under it).
    case lost
    /// Answer it with this status or rc, and do not carry it out.
    case refuse(UInt8)
    /// Restart the device (the loop returns `.restart`).
    case restart
  }

  /// How far the OTA transfer has come: the committed offset and the image's size from PREPARE.
  var otaProgress: FaultBook.Progress {
    let status = host.engine.transferStatus
    return FaultBook.Progress(
      end: UInt64(status.committedOffset), imageSize: status.size > 0 ? UInt64(status.size) : nil)
  }

  /// Fires the faults due at `moment`: each is logged and observed, the book saved; what they ask,
  /// carried out as far as the loop can here (a drop of the link; a power cut does not return).
  func fireFaults(_ moment: FaultBook.Moment, dropLink: () throws -> Void) throws -> (
    FaultVerdict, [Fault.Action]
  ) {
    guard let faults else { return (.carryOn, []) }
    let fired = faults.book.fire(moment)
    guard !fired.isEmpty else { return (.carryOn, []) }
    faults.store.save(faults.book, logger: logger)
    for fault in fired {
      logger.warning("\(fault)")
      observe(.fault(fault.description))
    }
    let actions = fired.map(\.fault.action)
    if actions.contains(.powerCut) {
      logger.critical("a power cut, as a fault asked: SIGKILL")
      ProcessEnvironment.flushStandardOutput()
      ProcessEnvironment.cutPower()
    }
    if actions.contains(.restart) {
      restartReason = "a fault asked for a restart"
      logger.notice("restarting: \(restartReason)")
      observe(.restart(reason: restartReason))
      link.disconnect()
      return (.restart, actions)
    }
    if actions.contains(.dropLink) {
      try dropLink()
      return (.lost, actions)
    }
    if actions.contains(.storageFull) {
      host.injectedWriteFailure = .system(
        operation: "write (a fault asked for)", path: "slot being written", errno: .noSpace)
    }
    for case .refuse(let status) in actions { return (.refuse(status), actions) }
    if actions.contains(.loseChunk) { return (.lost, actions) }
    return (.carryOn, actions)
  }

  /// The OTA central is dropped as a fault asked: the link first, then the device's own
  /// disconnect (the link reports none for a drop it was told to make).
  func dropOTACentral() throws {
    link.disconnect()
    faults?.droppedCentral = true
    _ = try handleDisconnect()
  }

  // MARK: The one way in

  /// `message` through the faults due at it (its protocol's `FaultView` says what it is): what is
  /// left to carry out, a refusal to answer, a loss, or a restart. Request faults come first, then,
  /// for a message that carries image bytes, data faults.
  func passFaults(_ message: InboundMessage) throws -> FaultOutcome {
    let bytes = message.bytes
    guard let faults, let view = faultView(message, faults) else { return .carryOn(bytes, .taken) }
    let drop = { () throws -> Void in try self.dropCentral(of: message) }
    if let (request, progress) = view.request {
      switch try fireFaults(.request(request, progress), dropLink: drop).0 {
      case .restart: return .restart
      case .lost: return .lost
      case .refuse(let status): return .refused(view.refusal(status))
      case .carryOn: break
      }
    }
    guard let data = view.data else { return .carryOn(bytes, .taken) }
    let (verdict, actions) = try fireFaults(.data(data), dropLink: drop)
    switch verdict {
    case .restart: return .restart
    case .lost, .refuse: return .lost
    case .carryOn:
      guard actions.contains(.corruptChunk), let corrupted = view.corrupted(bytes) else {
        return .carryOn(bytes, .taken)
      }
      return .carryOn(corrupted, .corruptedByFault)
    }
  }

  /// What the faults see of `message`: its protocol's description, with the transfer's progress.
  private func faultView(_ message: InboundMessage, _ faults: FaultDecorator) -> FaultView? {
    switch message {
    case .otaControl(let bytes): FaultView.otaRequest(bytes, progress: otaProgress)
    case .otaData(let bytes):
      FaultView.otaData(bytes, start: dataWriteStart(bytes), size: host.engine.transferStatus.size)
    case .smp(let bytes, _, _, _): FaultView.smp(bytes, imageSize: &faults.smpImageSize)
    case .nordicControl(let service, let bytes):
      FaultView.nordicControl(service, bytes, progress: nordic.progress(service))
    case .nordicPacket(let service, let bytes):
      FaultView.nordicPacket(bytes, progress: nordic.sessions[service]?.firmwareProgress)
    }
  }

  /// A fault dropped the link `message` came over: its central goes.
  private func dropCentral(of message: InboundMessage) throws {
    switch message {
    case .otaControl, .otaData: try dropOTACentral()
    case .smp(_, _, let central, _): if let central { link.disconnect(central: central) }
    case .nordicControl(let service, _), .nordicPacket(let service, _): try dropNordicDFUCentral(service)
    }
  }

  /// Where a data write's target bytes start: a chunk's or an operation's offset, or the first of
  /// packed operations'.
  func dataWriteStart(_ bytes: [UInt8]) -> UInt32? {
    let packed = host.engine.enabledFeatures.isSuperset(of: [.operations, .packedOperations])
    let at = packed ? PackedOperations.entryHeaderSize : 0
    guard bytes.count >= at + 5 else { return nil }
    return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(
      bytes[at + 3]) << 24
  }

  /// Sends a control-point notification, unless a delay holds it (or an answer held before it).
  func sendAnswer(_ bytes: [UInt8]) {
    let request = bytes.count >= 2 ? Opcode(rawValue: bytes[1]).map(FaultRequest.ota) : nil
    hold(at: .answer(request, otaProgress)) { [link] in link.notify(bytes) }
  }

  /// Runs `send` now, or holds it for the delay a fault asks (and behind any answer held already).
  func hold(at moment: FaultBook.Moment, _ send: @escaping () -> Void) {
    guard let faults else { return send() }
    let delays = faults.book.fire(moment)
    for fault in delays {
      logger.warning("\(fault)")
      observe(.fault(fault.description))
    }
    if !delays.isEmpty { faults.store.save(faults.book, logger: logger) }
    let delay = delays.compactMap { fired -> Duration? in
      if case .delay(let duration) = fired.fault.action { duration } else { nil }
    }.max()
    guard delay != nil || !faults.held.isEmpty else { return send() }
    let due = max(now + (delay ?? .zero), faults.held.last?.due ?? .zero)
    faults.held.append((due, send))
  }

  /// Sends the held answers whose time has come, in order.
  func releaseHeldAnswers() {
    guard let faults else { return }
    while let first = faults.held.first, first.due <= now {
      faults.held.removeFirst()
      first.send()
    }
  }

  /// Serves the fault control: its commands change the book, which is saved.
  func serveFaultControl(readable: Set<Int32>) {
    guard let faults, let control = faults.control else { return }
    control.serve(readable: readable, now: now) { line in
      let command: FaultControlCommand
      do {
        command = try FaultControlCommand(line: line)
      } catch {
        return "error: \(error)"
      }
      let (answer, changed) = command.apply(to: &faults.book)
      if changed {
        faults.store.save(faults.book, logger: logger)
        logger.notice("fault control: \(answer)")
      }
      return answer
    }
  }

  /// The next trial's health check fails when a fault asks: true when that fault fired.
  func faultFailsTrial() throws -> Bool {
    try fireFaults(.trialStarts, dropLink: {}).1.contains(.failHealthCheck)
  }
}
