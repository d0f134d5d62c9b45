import OTABoot
import OTAChecksum
import OTAEngine
import OTAReceiverHost
import OTAStorage
import OTAWire

/// Nordic's Legacy DFU on otad's slots (docs/NORDIC-DFU.md): START DFU and the image's size, the
/// init packet (checked against the device's type and revision, its version kept), the firmware in
/// 20-byte packets into the inactive slot through `ReceiverHost.perform` (the OTA protocol's own
/// writes, a commit per window, packet receipts every N packets), VALIDATE (the init packet's CRC16,
/// then the image check every update passes), ACTIVATE AND RESET (a trial: Nordic's
/// protocol has no confirm, the health check decides). One session at a time, from the central
/// that wrote START DFU; a disconnect ends it (Legacy DFU has no resume: the next START begins anew).
public struct LegacyDFUDevice: NordicDFUSession {
  /// What the device checks the init packet against: nil takes any (0xFFFF in the packet always does).
  public struct Identity: Equatable, Sendable {
    public var deviceType: UInt16?
    public var deviceRevision: UInt16?

    public init(deviceType: UInt16? = nil, deviceRevision: UInt16? = nil) {
      self.deviceType = deviceType
      self.deviceRevision = deviceRevision
    }
  }

  public typealias Output = NordicDFUOutput

  enum State: Equatable, Sendable {
    case idle
    /// START DFU came: the image sizes come next on the packet characteristic.
    case awaitingSizes
    case awaitingInit(size: UInt32)
    case receivingInit(size: UInt32, bytes: [UInt8])
    /// The transfer began (its identity and journal as the host keeps them): the firmware comes next.
    case ready(Transfer, check: LegacyInitPacket.Check)
    case receiving(Transfer, check: LegacyInitPacket.Check, received: UInt32, crc: CRC16)
    case received(Transfer, check: LegacyInitPacket.Check, crc: CRC16)
    case validated(TransferID)
  }

  public typealias Transfer = UpdateTransaction.Transfer

  public let identity: Identity
  private(set) var state = State.idle
  private var receiptEvery: UInt16 = 0
  private var packetsSinceReceipt: UInt16 = 0

  public init(identity: Identity = Identity()) { self.identity = identity }

  /// Whether a session is under way (between START DFU and its end).
  public var active: Bool { state != .idle }

  /// While the firmware arrives: the bytes received and the image's size (for faults on demand).
  public var firmwareProgress: (received: UInt32, size: UInt32)? {
    switch state {
    case .receiving(let transfer, _, let received, _): (received, transfer.journal.size)
    case .received(let transfer, _, _): (transfer.journal.size, transfer.journal.size)
    default: nil
    }
  }

  // MARK: Control point

  public mutating func control(_ bytes: [UInt8], host: inout ReceiverHost) throws(StorageError) -> Output {
    var out = Output()
    guard let first = bytes.first, let opcode = LegacyDFU.Opcode(rawValue: first) else {
      out.notifications.append([
        LegacyDFU.Opcode.response.rawValue, bytes.first ?? 0, LegacyDFU.Status.notSupported.rawValue,
      ])
      return out
    }
    switch opcode {
    case .startDFU:
      guard bytes.count == 2, bytes[1] == LegacyDFU.applicationImage else {
        out.notifications.append(LegacyDFU.response(.startDFU, .notSupported))
        out.note =
          "START DFU for an image type otad does not keep (\(bytes.dropFirst().first ?? 0)): only an application"
        return out
      }
      state = .awaitingSizes
      receiptEvery = 0
    case .initParameters:
      switch (bytes.dropFirst().first, state) {
      case (0x00?, .awaitingInit(let size)):
        state = .receivingInit(size: size, bytes: [])
      case (0x01?, .receivingInit(let size, let packet)):
        out.notifications.append(
          LegacyDFU.response(.initParameters, try begin(size: size, initPacket: packet, host: &host, &out)))
      default:
        out.notifications.append(LegacyDFU.response(.initParameters, .invalidState))
      }
    case .packetReceiptRequest:
      guard bytes.count == 3 else {
        out.notifications.append(LegacyDFU.response(.packetReceiptRequest, .notSupported))
        return out
      }
      receiptEvery = UInt16(bytes[1]) | UInt16(bytes[2]) << 8
      packetsSinceReceipt = 0
    case .receiveFirmware:
      guard case .ready(let transfer, let check) = state else {
        out.notifications.append(LegacyDFU.response(.receiveFirmware, .invalidState))
        return out
      }
      state = .receiving(transfer, check: check, received: 0, crc: CRC16())
      packetsSinceReceipt = 0
    case .validate:
      out.notifications.append(LegacyDFU.response(.validate, try validate(host: &host, &out)))
    case .activateAndReset:
      guard case .validated(let id) = state else {
        out.notifications.append(LegacyDFU.response(.activateAndReset, .invalidState))
        return out
      }
      state = .idle
      switch try host.activate(id, permanent: false) {
      case .success(let journal):
        out.restart = true
        out.note =
          "ACTIVATE AND RESET: \(journal.version) on trial in slot \(journal.slot); its health check decides"
      case .failure(.imageInvalid(_, let reason)):
        out.notifications.append(LegacyDFU.response(.activateAndReset, .operationFailed))
        out.note = "ACTIVATE AND RESET refused: \(reason)"
      case .failure(.refused(let refusal)):
        out.notifications.append(LegacyDFU.response(.activateAndReset, .invalidState))
        out.note = "ACTIVATE AND RESET refused: \(refusal)"
      case .failure(.deferred(let deferral, let detail)):
        // Kept: the device activates it itself once nothing holds it; the image stays validated,
        // and this central may ask again. Legacy DFU has no word for "later": operation failed.
        state = .validated(id)
        out.notifications.append(LegacyDFU.response(.activateAndReset, .operationFailed))
        out.note = "ACTIVATE AND RESET deferred (\(deferral.reason)): \(detail); the device keeps it"
      case .failure(.declined(let version)):
        out.notifications.append(LegacyDFU.response(.activateAndReset, .operationFailed))
        out.note = "ACTIVATE AND RESET: the device's owner declined \(version); the image was dropped"
      case .failure:
        out.notifications.append(LegacyDFU.response(.activateAndReset, .operationFailed))
      }
    case .systemReset:
      state = .idle
      if host.transaction.heldByAnother(.legacyDFU) {
        // A reset would end another protocol's session: not this central's to end.
        out.note = "SYS RESET ignored: \(Self.holder(host)) is updating the device"
        return out
      }
      out.restart = true
      out.note = "SYS RESET"
    case .imageSizeRequest, .response, .packetReceipt:
      out.notifications.append(LegacyDFU.response(opcode, .notSupported))
    }
    return out
  }

  // MARK: Packet characteristic

  public mutating func packet(_ bytes: [UInt8], host: inout ReceiverHost) throws(StorageError) -> Output {
    var out = Output()
    switch state {
    case .awaitingSizes:
      var reader = ByteReader(bytes)
      guard bytes.count == 12, let softDevice = try? reader.readU32(), let bootloader = try? reader.readU32(),
        let application = try? reader.readU32()
      else {
        state = .idle
        out.notifications.append(LegacyDFU.response(.startDFU, .notSupported))
        return out
      }
      guard softDevice == 0, bootloader == 0, application > 0 else {
        state = .idle
        out.notifications.append(LegacyDFU.response(.startDFU, .notSupported))
        out.note = "START DFU with a SoftDevice or bootloader: otad updates the application only"
        return out
      }
      guard UInt64(application) <= host.engine.configuration.slotCapacity else {
        state = .idle
        out.notifications.append(LegacyDFU.response(.startDFU, .dataSizeExceedsLimit))
        out.note = "START DFU: \(application) bytes do not fit the slot"
        return out
      }
      guard !ReceiverHost.unconfirmed(host.boot, host.running) else {
        state = .idle
        out.notifications.append(LegacyDFU.response(.startDFU, .invalidState))
        out.note = "START DFU refused: the running firmware is on trial and needs its verdict first"
        return out
      }
      guard !host.transaction.heldByAnother(.legacyDFU) else {
        state = .idle
        out.notifications.append(LegacyDFU.response(.startDFU, .invalidState))
        out.note = "START DFU refused: \(Self.holder(host)) is updating the device"
        return out
      }
      state = .awaitingInit(size: application)
      out.notifications.append(LegacyDFU.response(.startDFU, .success))
    case .receivingInit(let size, let packet):
      guard packet.count + bytes.count <= LegacyInitPacket.maxLength else {
        state = .idle
        out.notifications.append(LegacyDFU.response(.initParameters, .dataSizeExceedsLimit))
        return out
      }
      state = .receivingInit(size: size, bytes: packet + bytes)
    case .receiving(var transfer, let check, let received, var crc):
      let end = UInt64(received) + UInt64(bytes.count)
      guard end <= UInt64(transfer.journal.size), !bytes.isEmpty else {
        state = .idle
        out.notifications.append(LegacyDFU.response(.receiveFirmware, .dataSizeExceedsLimit))
        return out
      }
      let id = transfer.id
      let write = try host.perform(
        .write(slot: transfer.journal.slot, offset: received, bytes: bytes[...]), for: id)
      guard case .success = write else {
        return fail(write, &out)
      }
      crc.update(bytes)
      let now = UInt32(end)
      if now == transfer.journal.size
        || now - min(now, transfer.journal.committedOffset) >= host.engine.configuration.windowCapacity
      {
        transfer.journal.committedOffset = now
        let commit = try host.perform(.commit(transfer.journal), for: id)
        guard case .success = commit else { return fail(commit, &out) }
      }
      if now == transfer.journal.size {
        state = .received(transfer, check: check, crc: crc)
        out.notifications.append(LegacyDFU.response(.receiveFirmware, .success))
        return out
      }
      state = .receiving(transfer, check: check, received: now, crc: crc)
      packetsSinceReceipt &+= 1
      if receiptEvery > 0, packetsSinceReceipt >= receiptEvery {
        packetsSinceReceipt = 0
        out.notifications.append(LegacyDFU.packetReceipt(now))
      }
    default:
      // A packet nobody asked for (before START DFU, after the image): Nordic's bootloader ignores it.
      break
    }
    return out
  }

  /// A write or commit the host did not carry out: the session ends, in Legacy DFU's terms (the
  /// transaction refused it: invalid state; the storage failed: operation failed).
  private mutating func fail(_ result: Result<IOResult, TransactionError>, _ out: inout Output) -> Output {
    state = .idle
    if case .failure(.refused(let refusal)) = result {
      out.notifications.append(LegacyDFU.response(.receiveFirmware, .invalidState))
      out.note = "the firmware's bytes were refused: \(refusal)"
    } else {
      out.notifications.append(LegacyDFU.response(.receiveFirmware, .operationFailed))
    }
    return out
  }

  /// Who holds the device, for a note.
  static func holder(_ host: ReceiverHost) -> String {
    host.transaction.lease.map { "\($0.owner)" } ?? "another session"
  }

  /// The central went away: the session ends (what was committed stays in the journal, but Legacy
  /// DFU cannot resume it). START DFU and nothing else is how a client asks an application to jump
  /// to its bootloader (buttonless entry): otad's DFU service is the bootloader already.
  public mutating func disconnected() -> Output {
    var out = Output()
    if state == .awaitingSizes {
      out.note =
        "a central asked for the bootloader (START DFU, then it left): otad's DFU service is always ready"
    } else if state != .idle {
      out.note = "the Legacy DFU central left mid-session: its update ends (Legacy DFU has no resume)"
    }
    state = .idle
    return out
  }

  // MARK: Steps

  /// The init packet is whole: it is checked, then the transfer begins (PREPARE's erase and journal).
  private mutating func begin(
    size: UInt32, initPacket: [UInt8], host: inout ReceiverHost, _ out: inout Output
  )
    throws(StorageError) -> LegacyDFU.Status
  {
    state = .idle
    let packet: LegacyInitPacket
    do {
      packet = try LegacyInitPacket(bytes: initPacket)
    } catch {
      out.note = "init packet refused: \(error)"
      return .operationFailed
    }
    if let type = identity.deviceType, packet.deviceType != LegacyInitPacket.anyDevice,
      packet.deviceType != type
    {
      out.note =
        "init packet for device type 0x\(String(packet.deviceType, radix: 16)), this device is 0x\(String(type, radix: 16))"
      return .operationFailed
    }
    if let revision = identity.deviceRevision, packet.deviceRevision != LegacyInitPacket.anyDevice,
      packet.deviceRevision != revision
    {
      out.note = "init packet for device revision \(packet.deviceRevision), this device is \(revision)"
      return .operationFailed
    }
    if case .sha256 = packet.check {
      // DFU 0.7's SHA-256 check: not taken yet (a CRC16 packet, adafruit-nrfutil's default, is).
      out.note = "init packet with a SHA-256 (DFU 0.7): otad takes a CRC16 init packet (DFU 0.5, 0.6)"
      return .notSupported
    }
    let version = packet.version ?? host.boot[host.running].version
    switch try host.begin(.legacyDFU, size: size, crc32: 0, version: version) {
    case .success(let transfer):
      state = .ready(transfer, check: packet.check)
      out.note = "Legacy DFU of \(size) bytes, version \(version), into slot \(transfer.journal.slot)"
      return .success
    case .failure(.refused(let refusal)):
      out.note = "INIT refused: \(refusal)"
      return .invalidState
    case .failure:
      out.note = "the slot could not be prepared"
      return .operationFailed
    }
  }

  /// The whole image is in the slot: the init packet's check, the image's CRC32 into the journal, the
  /// image check (signatures, downgrades) every update passes.
  private mutating func validate(host: inout ReceiverHost, _ out: inout Output) throws(StorageError)
    -> LegacyDFU.Status
  {
    guard case .received(let transfer, let check, let crc) = state else { return .invalidState }
    state = .idle
    if case .crc16(let expected) = check, expected != crc.value {
      out.note =
        "VALIDATE: the firmware's CRC16 is 0x\(String(crc.value, radix: 16)), the init packet says 0x\(String(expected, radix: 16))"
      try host.discard(transfer.id)
      return .crcError
    }
    switch try host.validate(transfer.id) {
    case .success:
      state = .validated(transfer.id)
      return .success
    case .failure(.imageInvalid(_, let reason)):
      out.note = "VALIDATE refused the image: \(reason)"
      return .operationFailed
    case .failure(.refused(let refusal)):
      out.note = "VALIDATE refused: \(refusal)"
      return .invalidState
    case .failure:
      return .operationFailed
    }
  }
}
