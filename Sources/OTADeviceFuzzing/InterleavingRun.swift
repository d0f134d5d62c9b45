import OTABoot
import OTACBOR
import OTAChecksum
import OTAEngine
import OTAFuzzing
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTAStorage
import OTAStorageTesting
import OTATrust
import OTAWire

/// One run of the interleaving fuzzer: each input byte picks a step of one of the four protocols
/// (an OTA central, SMP clients over UDP, Nordic Legacy and Secure DFU from two centrals each), or
/// time passing, a restart or a power cut; after every step `InterleavingInvariants` checks the
/// device.
struct InterleavingRun {
  var device: InterleavingDevice
  var violations: [InvariantViolation] = []
  var trace: [String]?
  /// The SMP client's sequence number and the offset the device last told it.
  var smpSequence: UInt8 = 0
  var smpOffset = 0
  /// The hash of slot 1 the last state read reported (what a "test" names).
  var smpSlotOneHash: [UInt8]?
  /// How far each Nordic client thinks its firmware has come.
  var secureOffset = 0
  var secureInitSent = 0
  var counts = InterleavingFuzzer.Counts()

  static let centrals = ["/org/bluez/hci0/dev_00_00_00_00_00_01", "/org/bluez/hci0/dev_00_00_00_00_00_02"]

  init() throws(StorageError) {
    device = try InterleavingDevice()
  }

  mutating func note(_ line: @autoclosure () -> String) {
    if trace != nil { trace?.append(line()) }
  }

  /// One step; a power cut (planned by an earlier step) ends it and the device boots again.
  mutating func step(_ input: inout FuzzInput) {
    let choice = input.byte()
    do {
      switch choice % 20 {
      case 0, 1, 2, 3: try ota(&input)
      case 4, 5, 6, 7: try smp(&input)
      case 8, 9, 10: try legacy(&input)
      case 11, 12, 13: try secure(&input)
      case 14:
        let gone = Self.centrals[Int(input.byte() & 1)]
        note("Nordic central \(gone) goes")
        for service in [NordicDFUService.legacy, .secure] { try centralGone(gone, service) }
      case 15, 16:
        let wait = input.pick([Duration.milliseconds(100), .seconds(1), .seconds(31)])
        note("wait \(wait)")
        device.wait(wait)
      case 17:
        try restart(verdict: input.byte(), why: "a restart")
      case 18:
        let at = input.int(in: 0...40)
        note("power cut planned at the \(at)th storage operation")
        device.medium.inject(.powerCut, atOperation: at)
      default:
        let fault = input.pick([MemoryMedium.Fault.ioError, .noSpace, .shortWrite])
        let kinds = input.pick([
          MemoryMedium.Operation.writes, [.slotSync, .recordSync], [.slotRead], [.recordRename],
        ])
        note("storage fault \(fault) planned")
        device.medium.inject(fault, atOperation: input.int(in: 0...20), of: kinds)
      }
    } catch .powerCut {
      counts.powerCuts += 1
      bootAfterPowerCut(seed: UInt64(choice))
    } catch {
      // A storage failure a request met: the daemon's loop logs it and goes on (its boundary).
      counts.storageFailures += 1
      note("storage failed: \(error)")
    }
    violations += InterleavingInvariants.check(device)
  }

  /// Boots after a power cut (and again, if the boot itself meets the cut's aftermath).
  mutating func bootAfterPowerCut(seed: UInt64) {
    note("power cut: reboot")
    var seed = seed
    for _ in 0..<4 {
      do {
        let decision = try device.restart(powerCut: seed, verdict: UInt8(truncatingIfNeeded: seed))
        violations += InterleavingInvariants.checkBoot(decision, device)
        return
      } catch {
        seed &+= 1
      }
    }
    violations.append(InvariantViolation("no boot", "the device did not boot after a power cut"))
  }

  /// otad starts again. A start whose storage fails ends that process, and the service manager
  /// starts it again (`Restart=on-failure`) on the storage as the failure left it: the device never
  /// goes on with the host of the process before (whose idea of the boot state the failed start may
  /// have outdated). Planned faults that outlast a few starts are cleared, as a disk that recovered.
  mutating func restart(verdict: UInt8, why: String) throws(StorageError) {
    note("restart: \(why)")
    counts.restarts += 1
    for start in 0..<Self.startsBeforeFaultsClear + 1 {
      if start == Self.startsBeforeFaultsClear { device.medium.clearFaults() }
      do {
        let decision = try device.restart(verdict: verdict)
        violations += InterleavingInvariants.checkBoot(decision, device)
        return
      } catch .powerCut {
        throw .powerCut
      } catch {
        counts.storageFailures += 1
        note("start failed: \(error); the service manager starts otad again")
      }
    }
    violations.append(InvariantViolation("no start", "otad did not start on a storage without faults"))
  }

  static let startsBeforeFaultsClear = 4

  // MARK: The OTA central

  mutating func ota(_ input: inout FuzzInput) throws(StorageError) {
    let image = InterleavingFixtures.otaImage
    let committed = Int(device.host.engine.transferStatus.committedOffset)
    var event: ReceiverEvent
    switch input.byte() % 12 {
    case 0: event = .connected(mtu: ATTMTU(clamping: input.pick([23, 185, 247, 517])))
    case 1: event = .disconnected
    case 2:
      let crc = input.bool() ? CRC32.checksum(image) : 0
      event = .control(
        Request.prepare(size: UInt32(image.count), crc32: crc, version: InterleavingFixtures.otaVersion)
          .encoded, now: device.now)
    case 3, 4, 5:
      // Chunks from the committed offset on (or anywhere, now and then), as a pipelining central sends.
      let offset =
        input.bool()
        ? min(image.count - 1, committed + input.int(in: 0...8) * 200) : input.int(in: 0...(image.count - 1))
      let end = min(image.count, offset + 200)
      var payload = image[offset..<end]
      if input.byte() == 0 { payload = ArraySlice(payload.map { $0 ^ 0xFF }) }
      event = .data(DataChunk(offset: UInt32(offset), payload: payload).encoded, now: device.now)
    case 6:
      let length = min(Int(InterleavingFixtures.windowCapacity), image.count - min(committed, image.count))
      let crc = CRC32.checksum(image[min(committed, image.count)..<min(committed, image.count) + length])
      event = .control(
        Request.window(offset: UInt32(committed), length: UInt32(max(1, length)), crc32: crc).encoded,
        now: device.now)
    case 7: event = .control(Request.validate.encoded, now: device.now)
    case 8: event = .control(Request.activate(permanent: input.bool()).encoded, now: device.now)
    case 9:
      event = .control(
        input.pick([Request.confirm, .abort, .status, .features(.all)]).encoded, now: device.now)
    case 10:
      event = .control(
        Request.blockHashes(
          BlockHashRequest(
            blockSize: input.pick([512, 4096]), firstBlock: UInt32(input.int(in: 0...8)), maxCount: 8)
        ).encoded,
        now: device.now)
    default:
      event = .control(input.bytes(input.int(in: 0...12)), now: device.now)
    }
    note("OTA \(event)")
    for output in try device.host.handle(event) {
      switch output {
      case .notify(let bytes):
        if let problem = InterleavingInvariants.otaAnswerProblem(bytes) { violations.append(problem) }
      case .restart:
        counts.activations += 1
        try restart(verdict: input.byte(), why: "ACTIVATE")
        return
      case .armTimer:
        break
      }
    }
  }

  // MARK: SMP clients

  mutating func smp(_ input: inout FuzzInput) throws(StorageError) {
    let image = InterleavingFixtures.smpImage
    let client = input.pick(["10.0.0.1:1337", "10.0.0.2:1337", "BLE central"])
    smpSequence &+= 1
    let message: [UInt8]
    switch input.byte() % 9 {
    case 0:
      let data = image[0..<min(image.count, 700)]
      message = SMPMessage.encoded(
        .write, group: 1, command: 1, sequence: smpSequence,
        .textMap([
          "image": .unsigned(0), "off": .unsigned(0), "len": .unsigned(UInt64(image.count)),
          "data": .bytes(Array(data)),
          "sha": .bytes([1, 2, 3, 4]),
        ]))
    case 1, 2, 3:
      let offset = input.bool() ? smpOffset : input.int(in: 0...image.count)
      let data = image[min(offset, image.count)..<min(image.count, offset + 700)]
      message = SMPMessage.encoded(
        .write, group: 1, command: 1, sequence: smpSequence,
        .textMap(["off": .unsigned(UInt64(offset)), "data": .bytes(Array(data))]))
    case 4: message = SMPMessage.encoded(.read, group: 1, command: 0, sequence: smpSequence, .map([]))
    case 5:
      var entries: [CBOR.Entry] = [CBOR.Entry(.text("confirm"), .bool(input.bool()))]
      if input.bool(), let hash = smpSlotOneHash { entries.append(CBOR.Entry(.text("hash"), .bytes(hash))) }
      message = SMPMessage.encoded(.write, group: 1, command: 0, sequence: smpSequence, .map(entries))
    case 6: message = SMPMessage.encoded(.write, group: 1, command: 5, sequence: smpSequence, .map([]))
    case 7: message = SMPMessage.encoded(.write, group: 0, command: 5, sequence: smpSequence, .map([]))
    default: message = input.bytes(input.int(in: 0...24))
    }
    note("SMP from \(client): \(message.prefix(8).map { String($0, radix: 16) })")
    let armedBefore = device.host.boot.trial != nil || device.host.boot.confirmed != device.host.running
    let output = try device.smp.handle(message, host: &device.host, client: client)
    if !armedBefore, device.host.boot.trial != nil || device.host.boot.confirmed != device.host.running {
      counts.activations += 1
    }
    if let response = output.response {
      if let problem = InterleavingInvariants.smpAnswerProblem(response, to: message) {
        violations.append(problem)
      }
      if let body = try? CBORDecoder.decode(Array(response.dropFirst(SMPHeader.byteCount))) {
        if let offset = body["off"]?.unsignedValue { smpOffset = Int(min(offset, UInt64(image.count))) }
        if case .array(let images)? = body["images"], images.count > 1 {
          smpSlotOneHash = images[1]["hash"]?.bytesValue
        }
      }
    }
    if output.restart { try restart(verdict: input.byte(), why: "SMP reset") }
  }

  // MARK: Nordic DFU centrals

  /// A write from `central` to `service`: through the service's gate, as the daemon takes it.
  mutating func admitted(_ central: String, _ service: NordicDFUService, active: Bool) -> Bool {
    var gate = device.gates[service] ?? NordicDFUCentralGate(leaseTimeout: UpdateTransaction.leaseTimeout)
    defer { device.gates[service] = gate }
    switch gate.admit(central, now: device.now, sessionActive: active) {
    case .admit: return true
    case .refuse:
      counts.refusedWrites += 1
      return false
    case .takeOver:
      endSession(service)
      return true
    }
  }

  mutating func centralGone(_ central: String, _ service: NordicDFUService) throws(StorageError) {
    guard device.gates[service]?.gone(central) == true else { return }
    endSession(service)
  }

  mutating func endSession(_ service: NordicDFUService) {
    switch service {
    case .legacy:
      _ = device.legacy.disconnected()
      device.host.release(.legacyDFU)
    case .secure:
      _ = device.secure?.disconnected()
      device.host.release(.secureDFU)
    }
  }

  /// A write to a Nordic DFU service: its control point or its packet characteristic.
  enum NordicWrite {
    case control([UInt8])
    case packet([UInt8])
  }

  mutating func legacy(_ input: inout FuzzInput) throws(StorageError) {
    let central = Self.centrals[Int(input.byte() & 1)]
    let firmware = InterleavingFixtures.legacyFirmware
    var sizes: [UInt8] = []
    sizes.appendU32(0)
    sizes.appendU32(0)
    sizes.appendU32(UInt32(firmware.count))
    // The whole step is read before the gate decides, so that a refused write leaves the input
    // where a carried-out one would.
    let command = input.byte() % 11
    let write: NordicWrite
    switch command {
    case 0: write = .control([0x01, 0x04])
    case 1: write = .packet(sizes)
    case 2: write = .control([0x02, 0x00])
    case 3: write = .packet(InterleavingFixtures.legacyInitPacket)
    case 4: write = .control([0x02, 0x01])
    case 5: write = .control([0x03])
    case 6, 7:
      // Firmware where its client thinks it is (or the attacker's bytes).
      let at = Int(device.legacy.firmwareProgress?.received ?? 0)
      write = .packet(
        input.bool()
          ? Array(firmware[min(at, firmware.count)..<min(firmware.count, at + 20)])
          : [UInt8](repeating: 0xEE, count: 20))
    case 8: write = .control([0x04])
    case 9: write = .control(input.pick([[0x05], [0x06], [0x08, 4, 0]]))
    default: write = .control(input.bytes(input.int(in: 0...4)))
    }
    let verdict = input.byte()
    guard admitted(central, .legacy, active: device.legacy.active) else { return }
    let output: NordicDFUOutput
    switch write {
    case .control(let bytes): output = try device.legacy.control(bytes, host: &device.host)
    case .packet(let bytes): output = try device.legacy.packet(bytes, host: &device.host)
    }
    note("Legacy DFU \(command) from \(central): \(output.notifications) \(output.note ?? "")")
    for notification in output.notifications {
      if let problem = InterleavingInvariants.legacyAnswerProblem(notification) { violations.append(problem) }
    }
    if output.restart {
      if command == 9 { counts.activations += device.host.boot.trial != nil ? 1 : 0 }
      try restart(verdict: verdict, why: "Legacy DFU")
    }
  }

  mutating func secure(_ input: inout FuzzInput) throws(StorageError) {
    guard var session = device.secure else { return }
    let central = Self.centrals[Int(input.byte() & 1)]
    let firmware = InterleavingFixtures.secureFirmware
    let initPacket = InterleavingFixtures.secureInitPacket
    func create(_ type: UInt8, _ size: Int) -> [UInt8] {
      [0x01, type, UInt8(size & 0xFF), UInt8((size >> 8) & 0xFF), UInt8((size >> 16) & 0xFF), 0]
    }
    let command = input.byte() % 10
    let write: NordicWrite
    switch command {
    case 0: write = .control([0x06, input.bool() ? 0x01 : 0x02])
    case 1:
      secureInitSent = 0
      write = .control(create(0x01, initPacket.count))
    case 2:
      let piece = initPacket[
        min(secureInitSent, initPacket.count)..<min(initPacket.count, secureInitSent + 100)]
      secureInitSent += piece.count
      write = .packet(Array(piece))
    case 3: write = .control([0x03])
    case 4: write = .control([0x04])
    case 5:
      let start = Int(session.firmwareProgress?.received ?? 0) / 4096 * 4096
      secureOffset = start
      write = .control(create(0x02, min(4096, max(1, firmware.count - start))))
    case 6, 7:
      // As nrfutil sends them: 244 bytes, the object's last packet cut at its 4 KiB end.
      let at = min(Int(session.firmwareProgress?.received ?? UInt32(secureOffset)), firmware.count)
      let end = min(firmware.count, at + 244, (at / 4096 + 1) * 4096)
      write = .packet(
        input.bool() ? Array(firmware[at..<end]) : [UInt8](repeating: 0xEE, count: max(1, end - at)))
    case 8: write = .control(input.pick([[0x0C], [0x02, 4, 0], [0x00]]))
    default: write = .control(input.bytes(input.int(in: 0...7)))
    }
    guard admitted(central, .secure, active: session.active) else { return }
    let output: NordicDFUOutput
    switch write {
    case .control(let bytes): output = try session.control(bytes, host: &device.host)
    case .packet(let bytes): output = try session.packet(bytes, host: &device.host)
    }
    device.secure = session
    note("Secure DFU \(command) from \(central): \(output.notifications) \(output.note ?? "")")
    for notification in output.notifications {
      if let problem = InterleavingInvariants.secureAnswerProblem(notification) { violations.append(problem) }
    }
    if output.restart {
      counts.activations += 1
      try restart(verdict: input.byte(), why: "Secure DFU")
    }
  }
}
