import Crypto
import OTABoot
import OTAChecksum
import OTAJournal
import OTAReceiverHost
import OTAStorage
import OTATrust
import OTAWire

/// Nordic's Secure DFU on otad's slots (docs/NORDIC-DFU.md), as nrfutil and Nordic's DFU libraries
/// drive it: the init packet as a command object (SELECT, CREATE, its bytes, CALCULATE CHECKSUM,
/// EXECUTE: checked against the device's key, hardware and slot, then the inactive slot prepared),
/// then the firmware as data objects of up to 4 KiB, each written into the slot through
/// `ReceiverHost.perform` and committed (written, synced, journaled) by its EXECUTE. The last
/// EXECUTE checks the firmware's SHA-256 against the init packet's, runs the image check every update
/// passes and ACTIVATEs: a trial, whose health check decides (Secure DFU has no confirm). A central
/// that drops and comes back resumes where it left off; after otad restarted (or lost its power),
/// where the last executed object ends: the executed init packet is kept beside the transfer
/// journal (`SecureDFUDevice.recordName`), and `resume` takes the transfer up again at the start.
public struct SecureDFUDevice: NordicDFUSession {
  /// What an init packet must satisfy on this device.
  public struct Trust: Sendable {
    /// The public half of the key nrfutil signs with (`nrfutil keys display --key pk --format pem`).
    public var key: P256.Signing.PublicKey
    /// The init packet's hw_version must be this (nrfutil's `--hw-version`); nil takes any.
    public var hardwareVersion: UInt32?

    public init(key: P256.Signing.PublicKey, hardwareVersion: UInt32? = nil) {
      self.key = key
      self.hardwareVersion = hardwareVersion
    }

    /// The key from its PEM text; anything else (a private key among them: it has no business on
    /// the device) throws a message that says what to give instead. nrfutil writes 76 base64
    /// characters a line, which swift-crypto's own PEM reader refuses: the block is read here.
    public init(pem: String, hardwareVersion: UInt32? = nil) throws(KeyError) {
      if pem.contains("PRIVATE KEY") {
        throw KeyError(
          "it is a private key; give the device only the public half: nrfutil keys display --key pk --format pem KEY"
        )
      }
      do {
        let block = try PEMBlock(text: pem)
        guard block.label == "PUBLIC KEY" else { throw KeyError("") }
        key = try P256.Signing.PublicKey(derRepresentation: block.der)
      } catch {
        throw KeyError(
          "it is no ECDSA P-256 public key in PEM (nrfutil keys display --key pk --format pem KEY)")
      }
      self.hardwareVersion = hardwareVersion
    }
  }

  public struct KeyError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
  }

  public typealias Output = NordicDFUOutput

  /// How far the firmware has come: its offset and the CRC32 of everything so far.
  struct Progress: Sendable {
    var offset: UInt32 = 0
    var crc = CRC32()
  }

  /// The record that keeps the executed init packet beside the transfer journal.
  public static let recordName = "nordic.secure-dfu.init"

  /// An executed init packet and the transfer it began.
  struct Transfer: Sendable {
    /// The transfer's identity in the host's update transaction.
    var id: TransferID
    var initPacket: [UInt8]
    var packet: SecureInitPacket
    var journal: TransferJournal
    /// What the executed objects hold (durable), and what has arrived since (the object being written).
    var committed = Progress()
    var received = Progress()
    /// Where the data object being written ends, once CREATE made one.
    var objectEnd: UInt32?
  }

  public let trust: Trust
  private var selected = SecureDFU.ObjectType.command
  /// The command object CREATE made, and its bytes so far.
  private var command: (size: UInt32, bytes: [UInt8])?
  private var transfer: Transfer?
  private var receiptEvery: UInt16 = 0
  private var saidIgnored = false
  private var packetsSinceReceipt: UInt16 = 0

  public init(trust: Trust) { self.trust = trust }

  /// Whether an update is under way (an init packet executed, its firmware not yet activated).
  public var active: Bool { transfer != nil || command != nil }

  /// While the firmware arrives: the bytes received and the image's size (for faults on demand).
  public var firmwareProgress: (received: UInt32, size: UInt32)? {
    transfer.map { ($0.received.offset, $0.journal.size) }
  }

  // MARK: Control point

  public mutating func control(_ bytes: [UInt8], host: inout ReceiverHost) throws(StorageError) -> Output {
    var out = Output()
    dropIfSuperseded(host: host)
    guard let first = bytes.first, let opcode = SecureDFU.Opcode(rawValue: first) else {
      out.notifications.append(SecureDFU.response(bytes.first ?? 0, .opcodeNotSupported))
      return out
    }
    let argument = Array(bytes.dropFirst())
    switch opcode {
    case .protocolVersion:
      out.notifications.append(SecureDFU.response(first, .success, [SecureDFU.protocolVersionNumber]))
    case .select:
      guard argument.count == 1, let type = SecureDFU.ObjectType(rawValue: argument[0]) else {
        out.notifications.append(SecureDFU.response(first, .invalidObject))
        return out
      }
      selected = type
      switch type {
      case .command:
        let bytes = command?.bytes ?? transfer?.initPacket ?? []
        out.notifications.append(
          SecureDFU.selected(
            maxSize: SecureDFU.commandMaxSize, offset: UInt32(bytes.count), crc: CRC32.checksum(bytes)))
      case .data:
        let progress = transfer?.received ?? Progress()
        out.notifications.append(
          SecureDFU.selected(
            maxSize: SecureDFU.dataObjectMaxSize, offset: progress.offset, crc: progress.crc.value))
      }
    case .create:
      guard argument.count == 5, let type = SecureDFU.ObjectType(rawValue: argument[0]) else {
        out.notifications.append(SecureDFU.response(first, .invalidObject))
        return out
      }
      var reader = ByteReader(Array(argument.dropFirst()))
      let size = (try? reader.readU32()) ?? 0
      out.notifications.append(SecureDFU.response(first, create(type, size: size, host: host, &out)))
    case .setReceiptNotification:
      guard argument.count == 2 else {
        out.notifications.append(SecureDFU.response(first, .invalidParameter))
        return out
      }
      receiptEvery = UInt16(argument[0]) | UInt16(argument[1]) << 8
      packetsSinceReceipt = 0
      out.notifications.append(SecureDFU.response(first, .success))
    case .calculateChecksum:
      switch selected {
      case .command:
        let bytes = command?.bytes ?? transfer?.initPacket ?? []
        out.notifications.append(SecureDFU.checksum(offset: UInt32(bytes.count), crc: CRC32.checksum(bytes)))
      case .data:
        let progress = transfer?.received ?? Progress()
        out.notifications.append(SecureDFU.checksum(offset: progress.offset, crc: progress.crc.value))
      }
    case .execute:
      switch selected {
      case .command: out.notifications.append(try executeCommand(host: &host, &out))
      case .data: out.notifications.append(try executeData(host: &host, &out))
      }
    case .abort:
      command = nil
      transfer = nil
      Self.forgetRecord(host)
      out.note = "ABORT: the update is given up"
      out.notifications.append(SecureDFU.response(first, .success))
    case .mtuGet, .write, .ping, .hardwareVersion, .firmwareVersion, .response:
      // The serial transport's commands: not part of the BLE protocol.
      out.notifications.append(SecureDFU.response(first, .opcodeNotSupported))
    }
    return out
  }

  // MARK: Packet characteristic

  public mutating func packet(_ bytes: [UInt8], host: inout ReceiverHost) throws(StorageError) -> Output {
    var out = Output()
    dropIfSuperseded(host: host)
    switch selected {
    case .command:
      guard var object = command else {
        ignore("init packet bytes with no command object created", &out)
        break
      }
      guard object.bytes.count + bytes.count <= Int(object.size) else {
        ignore("init packet bytes beyond the command object's \(object.size)", &out)
        break
      }
      object.bytes += bytes
      command = object
      // Receipts count the command object's packets too (nrf_dfu_req_handler.c answers both).
      if let receipt = receipt(offset: UInt32(object.bytes.count), crc: CRC32.checksum(object.bytes)) {
        out.notifications.append(receipt)
      }
    case .data:
      guard var transfer, let end = transfer.objectEnd else {
        ignore("firmware bytes with no data object created", &out)
        break
      }
      guard !bytes.isEmpty, UInt64(transfer.received.offset) + UInt64(bytes.count) <= UInt64(end) else {
        ignore("firmware bytes beyond the data object's end (\(end))", &out)
        break
      }
      let offset = transfer.received.offset
      switch try host.perform(
        .write(slot: transfer.journal.slot, offset: offset, bytes: bytes[...]), for: transfer.id)
      {
      case .success: break
      case .failure(.refused(let refusal)):
        // Not this session's slot any more: the update is over (SELECT shows nothing to resume).
        self.transfer = nil
        Self.forgetRecord(host)
        out.note = "the firmware's bytes were refused: \(refusal)"
        return out
      case .failure:
        // The slot could not be written: what arrived since the last EXECUTE is lost; CALCULATE
        // CHECKSUM tells the central, which sends the object again.
        out.note = "the slot could not be written at \(offset)"
        return out
      }
      transfer.received.offset += UInt32(bytes.count)
      transfer.received.crc.update(bytes)
      self.transfer = transfer
      if let receipt = receipt(offset: transfer.received.offset, crc: transfer.received.crc.value) {
        out.notifications.append(receipt)
      }
    }
    return out
  }

  /// A packet arrived: after every N (SET PRN), the offset and CRC32 so far, as CALCULATE CHECKSUM
  /// answers them.
  private mutating func receipt(offset: UInt32, crc: @autoclosure () -> UInt32) -> [UInt8]? {
    packetsSinceReceipt &+= 1
    guard receiptEvery > 0, packetsSinceReceipt >= receiptEvery else { return nil }
    packetsSinceReceipt = 0
    return SecureDFU.checksum(offset: offset, crc: crc())
  }

  /// A packet nobody can place is dropped (the packet characteristic has no answer); the log hears
  /// of it once until the next CREATE, not once a write: a central that floods it costs no log.
  private mutating func ignore(_ what: String, _ out: inout Output) {
    guard !saidIgnored else { return }
    saidIgnored = true
    out.note = "\(what): ignored (and any more until the next CREATE)"
  }

  /// The central went away: as on Nordic's bootloader, what arrived stays (the executed objects
  /// committed, the one being written in the slot), so that a central that comes back resumes there:
  /// SELECT tells it where, and the CRC32 of everything so far.
  public mutating func disconnected() -> Output {
    var out = Output()
    if let transfer {
      out.note =
        "the Secure DFU central left at \(transfer.received.offset) of \(transfer.journal.size) bytes (\(transfer.committed.offset) committed): a central that comes back resumes there"
    }
    return out
  }

  // MARK: Steps

  private mutating func create(
    _ type: SecureDFU.ObjectType, size: UInt32, host: ReceiverHost, _ out: inout Output
  ) -> SecureDFU.Result {
    selected = type
    saidIgnored = false
    switch type {
    case .command:
      guard size > 0 else { return .invalidParameter }
      guard size <= SecureDFU.commandMaxSize else { return .insufficientResources }
      guard !ReceiverHost.unconfirmed(host.boot, host.running) else {
        out.note = "CREATE refused: the running firmware is on trial and needs its verdict first"
        return .operationNotPermitted
      }
      // A new init packet begins a new update: what an earlier one began is given up.
      command = (size, [])
      transfer = nil
      Self.forgetRecord(host)
      packetsSinceReceipt = 0
    case .data:
      guard var transfer else {
        out.note = "CREATE of a data object before an init packet was executed"
        return .operationNotPermitted
      }
      // A data object begins where the executed ones end: what arrived of an object not executed
      // is written again. Its size as Nordic's bootloader takes it: not 0, a whole page unless it is
      // the last, at most a page, within the firmware.
      let end = UInt64(transfer.committed.offset) + UInt64(size)
      guard size > 0, size % SecureDFU.dataObjectMaxSize == 0 || end == UInt64(transfer.journal.size) else {
        return .invalidParameter
      }
      guard size <= SecureDFU.dataObjectMaxSize else { return .insufficientResources }
      guard end <= UInt64(transfer.journal.size) else { return .operationNotPermitted }
      transfer.received = transfer.committed
      transfer.objectEnd = transfer.committed.offset + size
      self.transfer = transfer
      packetsSinceReceipt = 0
    }
    return .success
  }

  /// EXECUTE of the init packet: checked, then the slot prepared. The same packet executed again
  /// (a central resuming) keeps the transfer it began.
  private mutating func executeCommand(host: inout ReceiverHost, _ out: inout Output) throws(StorageError)
    -> [UInt8]
  {
    let opcode = SecureDFU.Opcode.execute.rawValue
    guard let object = command else {
      if transfer != nil { return SecureDFU.response(opcode, .success) }
      return SecureDFU.response(opcode, .operationNotPermitted)
    }
    guard object.bytes.count == Int(object.size) else {
      out.note = "EXECUTE of an init packet of \(object.bytes.count) of its \(object.size) bytes"
      return SecureDFU.response(opcode, .operationNotPermitted)
    }
    command = nil
    let packet: SecureInitPacket
    do throws(SecureDFU.Refusal) {
      packet = try SecureInitPacket(bytes: object.bytes)
      try packet.check(
        key: trust.key, hardwareVersion: trust.hardwareVersion,
        slotCapacity: host.engine.configuration.slotCapacity)
    } catch {
      out.note = "init packet refused: \(Self.describe(error))"
      return error.answer(opcode)
    }
    let version = packet.version ?? host.boot[host.running].version
    // Older than the confirmed firmware: refused here, as Nordic's bootloader refuses an application
    // below its own (nrf_dfu_ver_validation.c), unless the device allows downgrades.
    let confirmed = host.boot[host.boot.confirmed].version
    guard version >= confirmed || host.imageCheck.policy.allowDowngrade else {
      out.note =
        "init packet refused: its version \(version) is older than the confirmed \(confirmed) (0x0B 0x05)"
      return SecureDFU.response(opcode, .firmwareVersionFailure)
    }
    let transfer: UpdateTransaction.Transfer
    switch try host.begin(.secureDFU, size: packet.applicationSize, crc32: 0, version: version) {
    case .success(let began): transfer = began
    case .failure(.refused(let refusal)):
      out.note = "the init packet holds, but the update cannot begin: \(refusal)"
      return SecureDFU.response(opcode, .operationNotPermitted)
    case .failure:
      out.note = "the slot could not be prepared"
      return SecureDFU.response(opcode, .operationFailed)
    }
    // Kept so that a restart resumes this transfer; if it cannot be kept, a restart begins anew.
    try? host.storage.records.replace(Self.recordName, with: object.bytes)
    self.transfer = Transfer(
      id: transfer.id, initPacket: object.bytes, packet: packet, journal: transfer.journal)
    out.note =
      "an update of \(packet.applicationSize) bytes, version \(version), into slot \(transfer.journal.slot): its init packet is signed by the trusted key"
    return SecureDFU.response(opcode, .success)
  }

  /// EXECUTE of a data object: its bytes committed; after the last, the whole image checked and
  /// activated.
  private mutating func executeData(host: inout ReceiverHost, _ out: inout Output) throws(StorageError)
    -> [UInt8]
  {
    let opcode = SecureDFU.Opcode.execute.rawValue
    guard var transfer else { return SecureDFU.response(opcode, .operationNotPermitted) }
    if transfer.received.offset != transfer.committed.offset {
      guard
        transfer.received.offset == transfer.objectEnd || transfer.received.offset == transfer.journal.size
      else {
        out.note =
          "EXECUTE of a data object not yet whole (\(transfer.received.offset) of \(transfer.objectEnd ?? 0))"
        return SecureDFU.response(opcode, .operationNotPermitted)
      }
      transfer.journal.committedOffset = transfer.received.offset
      switch try host.perform(.commit(transfer.journal), for: transfer.id) {
      case .success: break
      case .failure(.refused(let refusal)):
        self.transfer = nil
        Self.forgetRecord(host)
        out.note = "the data object was refused: \(refusal)"
        return SecureDFU.response(opcode, .operationNotPermitted)
      case .failure:
        out.note = "the data object up to \(transfer.received.offset) could not be committed"
        transfer.received = transfer.committed
        transfer.journal.committedOffset = transfer.committed.offset
        self.transfer = transfer
        return SecureDFU.response(opcode, .operationFailed)
      }
      transfer.committed = transfer.received
      transfer.objectEnd = nil
      self.transfer = transfer
    }
    guard transfer.committed.offset == transfer.journal.size else {
      return SecureDFU.response(opcode, .success)
    }
    return try finish(transfer, host: &host, &out)
  }

  /// The whole firmware is in the slot: its SHA-256 against the init packet's, its CRC32 into the
  /// journal, the image check every update passes, then ACTIVATE.
  private mutating func finish(_ transfer: Transfer, host: inout ReceiverHost, _ out: inout Output)
    throws(StorageError) -> [UInt8]
  {
    let opcode = SecureDFU.Opcode.execute.rawValue
    self.transfer = nil
    Self.forgetRecord(host)
    let journal = transfer.journal
    let digest = try SourceDigest.sha256(
      of: SlotImageSource(try host.storage.slots.reader(journal.slot)), length: UInt64(journal.size))
    guard digest == transfer.packet.sha256 else {
      try host.discard(transfer.id)
      out.note = "the firmware's SHA-256 is not the init packet's: the update is given up"
      return SecureDFU.response(opcode, .verificationFailed)
    }
    switch try host.validate(transfer.id, crc32: transfer.committed.crc.value) {
    case .success: break
    case .failure(.imageInvalid(_, let reason)):
      out.note = "the image check refused the firmware: \(reason)"
      return SecureDFU.response(opcode, .invalidObject)
    case .failure(.refused(let refusal)):
      out.note = "the firmware was refused: \(refusal)"
      return SecureDFU.response(opcode, .operationNotPermitted)
    case .failure:
      return SecureDFU.response(opcode, .operationFailed)
    }
    switch try host.activate(transfer.id, permanent: false) {
    case .success:
      out.restart = true
      out.note =
        "the last data object executed: \(journal.version) on trial in slot \(journal.slot); its health check decides"
      return SecureDFU.response(opcode, .success)
    case .failure(.imageInvalid(_, let reason)):
      out.note = "the activation was refused: \(reason)"
      return SecureDFU.response(opcode, .invalidObject)
    case .failure(.refused(let refusal)):
      out.note = "the activation was refused: \(refusal)"
      return SecureDFU.response(opcode, .operationNotPermitted)
    case .failure(.deferred(let deferral, let detail)):
      // Validated and kept: the device activates it itself once nothing holds it. Secure DFU has no
      // word for "later": operation not permitted, its nearest.
      out.note = "the activation is deferred (\(deferral.reason)): \(detail); the device keeps it"
      return SecureDFU.response(opcode, .operationNotPermitted)
    case .failure(.declined(let version)):
      out.note = "the device's owner declined \(version): the firmware was dropped"
      return SecureDFU.response(opcode, .operationFailed)
    case .failure:
      return SecureDFU.response(opcode, .operationFailed)
    }
  }

  /// Another protocol (our own, SMP) took the slot over since: this session's transfer is gone.
  private mutating func dropIfSuperseded(host: ReceiverHost) {
    guard let transfer, host.transfer(transfer.id) == nil else { return }
    self.transfer = nil
    Self.forgetRecord(host)
  }

  private static func forgetRecord(_ host: ReceiverHost) {
    try? host.storage.records.remove(recordName)
  }

  // MARK: Restart

  /// At otad's start: the transfer an executed init packet began, taken up again where its last
  /// executed object ends, when the kept init packet still holds (the trusted key, the slot) and
  /// the journal is still its transfer's; else the record is dropped and nothing resumes. A line
  /// for the log, or nil when there was nothing to resume.
  public mutating func resume(host: inout ReceiverHost) throws(StorageError) -> String? {
    guard let bytes = try? host.storage.records.load(Self.recordName) else { return nil }
    let packet: SecureInitPacket
    do throws(SecureDFU.Refusal) {
      packet = try SecureInitPacket(bytes: bytes)
      try packet.check(
        key: trust.key, hardwareVersion: trust.hardwareVersion,
        slotCapacity: host.engine.configuration.slotCapacity)
    } catch {
      Self.forgetRecord(host)
      return "the kept Secure DFU init packet no longer holds (\(Self.describe(error))): nothing to resume"
    }
    let version = packet.version ?? host.boot[host.running].version
    guard let current = host.transaction.current(of: .secureDFU), case var journal = current.journal,
      journal.state == .receiving, journal.slot == host.running.other,
      journal.size == packet.applicationSize, journal.version == version,
      journal.committedOffset <= journal.size
    else {
      Self.forgetRecord(host)
      return "the kept Secure DFU init packet is not the transfer's under way: nothing to resume"
    }
    var progress = Progress(offset: journal.committedOffset)
    if journal.committedOffset > 0 {
      guard
        case .success(.crc32(let crc)) = try host.perform(
          .checkWindow(slot: journal.slot, offset: 0, length: journal.committedOffset), for: current.id)
      else { return nil }
      progress.crc = CRC32(continuing: crc)
    }
    journal.committedOffset = progress.offset
    transfer = Transfer(
      id: current.id, initPacket: bytes, packet: packet, journal: journal, committed: progress,
      received: progress)
    return "a Secure DFU update of \(journal.size) bytes, version \(version), resumes at \(progress.offset)"
  }

  static func describe(_ refusal: SecureDFU.Refusal) -> String {
    switch (refusal.result, refusal.extended) {
    case (.invalidObject, _):
      "it is no init packet this device can read, or its signature is not by the trusted key (0x05)"
    case (.operationFailed, _): "its signature is not 64 bytes (0x0A)"
    case (.insufficientResources, _): "its application does not fit the slot (0x04)"
    case (_, .signatureMissing?): "it is not signed (0x0B 0x08)"
    case (_, .wrongSignatureType?): "its signature is not ECDSA P-256 (0x0B 0x0B)"
    case (_, .initCommandInvalid?):
      "it is for no application, or has no size: otad keeps no SoftDevice or bootloader (0x0B 0x04)"
    case (_, .hardwareVersionFailure?): "its hw_version is not this device's (0x0B 0x06)"
    case (_, .softDeviceVersionFailure?):
      "it needs a SoftDevice, and this device has none (sd_req without 0x00 or 0xFFFE) (0x0B 0x07)"
    case (_, .wrongHashType?): "it has no SHA-256 of the firmware (0x0B 0x09)"
    default:
      "refused (\(refusal.answer(0).dropFirst(2).map { String($0, radix: 16) }.joined(separator: " ")))"
    }
  }
}
