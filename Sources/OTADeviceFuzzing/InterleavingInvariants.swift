import OTABoot
import OTACBOR
import OTAFuzzing
import OTASMP
import OTATrust
import OTAWire

/// What must hold after every step of the interleaving fuzzer, whatever the protocols did:
/// - the running slot's bytes are those this boot found (no protocol ever writes it);
/// - a slot that is armed for a trial, running one, or confirmed holds exactly the bytes its
///   activation sealed (an activation never goes without a seal; only the factory image has none);
/// - every answer is well formed in its protocol.
enum InterleavingInvariants {
  static func check(_ device: InterleavingDevice) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    let running = device.host.running
    if device.medium.slotBytes(running) != device.runningBytes {
      found.append(InvariantViolation("running slot written", "slot \(running)'s bytes changed"))
    }
    let boot = device.host.boot
    for slot in SlotID.allCases where boot[slot].status == .trial || boot[slot].status == .good {
      found += sealProblems(slot, boot, device)
    }
    return found
  }

  /// The boot stage's decision: the slot it runs is never one whose bytes broke their seal.
  static func checkBoot(_ decision: BootDecision, _ device: InterleavingDevice) -> [InvariantViolation] {
    let state = decision.state
    guard state[decision.run].status == .trial || state[decision.run].status == .good else { return [] }
    return sealProblems(decision.run, state, device).map {
      InvariantViolation("unsealed bytes booted", $0.detail)
    }
  }

  static func sealProblems(_ slot: SlotID, _ boot: BootState, _ device: InterleavingDevice)
    -> [InvariantViolation]
  {
    let recorded = boot[slot]
    guard let seal = recorded.seal else {
      // Only the factory image was never activated (its size is unknown to the boot state).
      if recorded.size == 0, recorded.version == InterleavingFixtures.factoryVersion { return [] }
      return [
        InvariantViolation("activation without a seal", "slot \(slot) is \(recorded.status) with no seal")
      ]
    }
    let bytes = device.medium.slotBytes(slot)
    guard Int(recorded.size) <= bytes.count else {
      return [
        InvariantViolation("seal broken", "slot \(slot): \(recorded.size) bytes sealed in a smaller slot")
      ]
    }
    var hasher = IncrementalSHA256()
    hasher.update(Array(bytes.prefix(Int(recorded.size))))
    guard hasher.finalize() == seal else {
      return [
        InvariantViolation(
          "seal broken", "slot \(slot) is \(recorded.status) and no longer holds its sealed bytes")
      ]
    }
    return []
  }

  // MARK: Answers

  /// An OTA notification: a response (at most 20 bytes, or a BLOCK HASHES page) or a missing-range
  /// report.
  static func otaAnswerProblem(_ bytes: [UInt8]) -> InvariantViolation? {
    if (try? Response(bytes: bytes)) != nil || (try? MissingReport(bytes: bytes)) != nil { return nil }
    return InvariantViolation("OTA answer", "undecodable notification \(bytes.prefix(12))")
  }

  /// An SMP answer: a response header for the request's group, command and sequence, and a body
  /// that is one CBOR map of the length the header says.
  static func smpAnswerProblem(_ answer: [UInt8], to request: [UInt8]) -> InvariantViolation? {
    guard let header = try? SMPHeader(bytes: answer), let asked = try? SMPHeader(bytes: request) else {
      return InvariantViolation("SMP answer", "no header in \(answer.prefix(12))")
    }
    let body = Array(answer.dropFirst(SMPHeader.byteCount))
    guard header.operation == .readResponse || header.operation == .writeResponse,
      header.group == asked.group, header.command == asked.command, header.sequence == asked.sequence,
      Int(header.length) == body.count, case .map? = try? CBORDecoder.decode(body)
    else {
      return InvariantViolation("SMP answer", "\(answer.prefix(16)) does not answer \(request.prefix(8))")
    }
    return nil
  }

  /// Legacy DFU: a response `0x10 opcode status` or a packet receipt `0x11` + u32.
  static func legacyAnswerProblem(_ bytes: [UInt8]) -> InvariantViolation? {
    if bytes.count == 3, bytes[0] == 0x10, (1...6).contains(bytes[2]) { return nil }
    if bytes.count == 5, bytes[0] == 0x11 { return nil }
    return InvariantViolation("Legacy DFU answer", "\(bytes)")
  }

  /// Secure DFU: `0x60 opcode result` and what the opcode answers with.
  static func secureAnswerProblem(_ bytes: [UInt8]) -> InvariantViolation? {
    if bytes.count >= 3, bytes[0] == 0x60, bytes.count <= 20 { return nil }
    return InvariantViolation("Secure DFU answer", "\(bytes)")
  }
}
