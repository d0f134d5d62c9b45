import Logging
import OTACBOR
import OTAFaults
import OTASMP
import OTAStorage
import OTASystem
import OTAWire

/// Faults on demand in the daemon's loop (docs/APP-TESTING.md): the book of faults asked for, the
/// fault control's socket, and the answers a delay holds back. Present only when the configuration
/// allows faults.
final class FaultInjection {
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
  static func open(stateDirectory: String, configured: [Fault], logger: Logger) -> FaultInjection {
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
    return FaultInjection(book: book, store: store, control: control)
  }

  var nextDeadline: Duration? { [held.first?.due, control?.nextDeadline].compactMap { $0 }.min() }

  var descriptors: [Int32] { control?.descriptors ?? [] }
}

extension DeviceService {
  /// Allows faults on demand (docs/APP-TESTING.md): the book kept in `stateDirectory` with
  /// `configured` laid over it, and the fault control's socket there.
  public func allowFaults(stateDirectory: String, configured: [Fault]) {
    faults = FaultInjection.open(stateDirectory: stateDirectory, configured: configured, logger: logger)
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

  // MARK: The OTA protocol

  /// A control-point request, before the host sees it: nil to carry it out, else whether the loop
  /// must restart.
  func faultsBeforeRequest(_ bytes: [UInt8]) throws -> Bool? {
    guard faults != nil, let opcode = bytes.first.flatMap(Opcode.init(rawValue:)) else { return nil }
    switch try fireFaults(.request(.ota(opcode), otaProgress), dropLink: dropOTACentral).0 {
    case .carryOn: return nil
    case .lost: return false
    case .restart: return true
    case .refuse(let status):
      sendAnswer(
        Response(requestOpcode: opcode.rawValue, status: StatusCode(rawValue: status) ?? .busy).encoded)
      return false
    }
  }

  /// A data write, before the host sees it: the bytes to carry on with (perhaps one flipped), nil
  /// when it is lost, or `restart`.
  func faultsBeforeData(_ bytes: [UInt8]) throws -> (bytes: [UInt8]?, restart: Bool) {
    guard faults != nil, let start = dataWriteStart(bytes) else { return (bytes, false) }
    let size = host.engine.transferStatus.size
    let end = UInt64(start) + UInt64(max(1, bytes.count - DataChunk.headerSize))
    let progress = FaultBook.Progress(end: end, imageSize: size > 0 ? UInt64(size) : nil)
    let (verdict, actions) = try fireFaults(.data(progress), dropLink: dropOTACentral)
    return Self.carried(bytes, verdict, actions)
  }

  /// What is left of a data write after the faults that fired: nil when it is lost (or refused), its
  /// last byte flipped when a fault corrupts it; or a restart.
  static func carried(_ bytes: [UInt8], _ verdict: FaultVerdict, _ actions: [Fault.Action]) -> (
    bytes: [UInt8]?, restart: Bool
  ) {
    switch verdict {
    case .restart: return (nil, true)
    case .lost, .refuse: return (nil, false)
    case .carryOn:
      guard actions.contains(.corruptChunk), !bytes.isEmpty else { return (bytes, false) }
      var corrupted = bytes
      corrupted[corrupted.count - 1] ^= 0x5A
      return (corrupted, false)
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

  // MARK: SMP

  /// An SMP message, before the server sees it: the message to carry on with (perhaps an upload's
  /// byte flipped), nil when it is lost, the refusal to answer, or a restart.
  func faultsBeforeSMP(_ message: [UInt8], central: String?) throws -> (
    message: [UInt8]?, refuse: UInt8?, restart: Bool
  ) {
    guard let faults, let header = try? SMPHeader(bytes: message), header.operation.isRequest,
      let name = FaultRequest.SMPCommandName(group: header.group, id: header.command)
    else { return (message, nil, false) }
    let drop: () throws -> Void = { [link] in
      if let central { link.disconnect(central: central) }
    }
    var progress = FaultBook.Progress(end: 0, imageSize: faults.smpImageSize)
    var upload: [CBOR.Entry]?
    if name == .upload, header.operation == .write,
      let body = try? SMPBody(bytes: Array(message.dropFirst(SMPHeader.byteCount)), limits: CBORLimits())
    {
      let offset = (try? body.unsigned("off")) ?? nil ?? 0
      if offset == 0, let length = (try? body.unsigned("len")) ?? nil { faults.smpImageSize = length }
      let count = ((try? body.bytes("data")) ?? nil)?.count ?? 0
      progress = FaultBook.Progress(end: offset + UInt64(max(1, count)), imageSize: faults.smpImageSize)
      upload = body.entries
    }
    switch try fireFaults(.request(.smp(name), progress), dropLink: drop).0 {
    case .restart: return (nil, nil, true)
    case .lost: return (nil, nil, false)
    case .refuse(let rc): return (nil, rc, false)
    case .carryOn: break
    }
    guard let upload else { return (message, nil, false) }
    let (verdict, actions) = try fireFaults(.data(progress), dropLink: drop)
    switch verdict {
    case .restart: return (nil, nil, true)
    case .lost, .refuse: return (nil, nil, false)
    case .carryOn:
      guard actions.contains(.corruptChunk) else { return (message, nil, false) }
      return (Self.flippingUploadByte(header, upload) ?? message, nil, false)
    }
  }

  /// The upload with the last byte of its data flipped, its header unchanged (the body keeps its
  /// length); nil when it carries no data.
  private static func flippingUploadByte(_ header: SMPHeader, _ entries: [CBOR.Entry]) -> [UInt8]? {
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
    let body = CBOR.map([CBOR.Entry(.text("rc"), .unsigned(UInt64(rc)))]).encoded
    let header = SMPHeader(
      operation: request.operation.response, version: min(request.version, 1), flags: 0,
      length: UInt16(body.count), group: request.group, sequence: request.sequence, command: request.command)
    return header.encoded + body
  }
}
