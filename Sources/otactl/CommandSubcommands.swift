import ArgumentParser
import Foundation
import OTACentral
import OTALink
import OTAWire

/// `info`: read the device's Info and print it.
struct InfoCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "info", abstract: "Read the device's Info: versions, slots, the transfer, the last outcome.")

  @OptionGroup var device: DeviceOptions

  func run() throws {
    let (info, identity) = try talk(device) { link, timeout in
      CommandSession.identify(link: link, timeout: timeout)
    }
    if device.json {
      JSONOutput.document(InfoJSON(info, identity: identity))
      return
    }
    print(
      "running: slot \(info.runningSlot), version \(info.runningVersion)\(info.flags.contains(.runningOnTrial) ? " (on trial)" : "")"
    )
    let unknown = "unknown (the device does not say)"
    print("serial: \(identity.serial ?? unknown)")
    print("model: \(identity.model ?? unknown)")
    print("hardware revision: \(identity.hardwareRevision ?? unknown)")
    for slot in SlotID.allCases {
      let marker = info.runningSlot == slot ? "▶" : " "
      let version = info.slotVersions[slot]
      let content = info.runningSlot == slot ? "running" : "\(info.inactiveSlotContent)"
      print("  \(marker) slot \(slot): \(version == .zero ? "no image" : "firmware \(version)") (\(content))")
    }
    print(
      "state: \(info.state); slot capacity \(info.slotCapacity) bytes, window \(info.windowCapacity), chunk \(info.maxChunkPayload)"
    )
    print("chunks dropped since the device started: \(info.chunksDropped)")
    if info.maxOperationLength > 0 {
      let image =
        info.runningImageSize > 0
        ? "the running image is \(info.runningImageSize) bytes, CRC32 "
          + String(format: "%08x", info.runningImageCRC)
        : info.features.contains(.blockHashRequests)
          ? "the running image is unknown (copies only of the slot's blocks, found by BLOCK HASHES; "
            + "`otad adopt` makes it a delta base)"
          : "the running image is unknown (no copies from it)"
      print("data operations: up to \(info.maxOperationLength) bytes each; \(image)")
    }
    if info.maxFrameLength > 0 {
      print(
        "zstd frames against the running image: up to \(info.maxFrameLength) bytes each "
          + "(otactl delta makes them; a push with --delta-plan sends them)")
    }
    print(
      "requires: "
        + (info.flags.contains(.signaturesRequired) ? "signed images" : "no signature")
        + (info.flags.contains(.pairingRequired) ? ", a paired (bonded) central to write" : ", no pairing"))
    print(
      "encrypted images: "
        + (info.flags.contains(.decryptsImages)
          ? "accepted (the device holds a decryption key)" : "refused (the device holds no decryption key)"))
    if info.flags.contains(.bootStateRebuilt) {
      print(
        "boot state: rebuilt after it was lost; updates are refused until the running firmware proves "
          + "itself (the device's health check) or is confirmed (a paired central's CONFIRM, or otad mark-good)"
      )
    }
    if info.flags.contains(.consentRequired) {
      print("consent required: the device asks its owner before it activates an update (otad consent)")
    }
    if info.keptActivation.kind != .none {
      print("kept activation: \(info.keptActivation.summary)")
    }
    if info.transfer.state != .idle {
      print(
        "transfer: \(info.transferVersion), \(info.transfer.committedOffset) of \(info.transfer.size) bytes committed"
      )
    }
    if info.lastOutcome.result != .none {
      print(
        "last update: \(info.lastOutcome.from) → \(info.lastOutcome.to) \(info.lastOutcome.result)"
          + (info.lastOutcome.result == .rolledBack ? " (\(info.lastOutcome.reason))" : "")
          + ", \(info.lastOutcome.attemptsUsed) trial boot(s)"
      )
    }
  }
}

/// `abort`: drop the transfer in progress.
struct AbortCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "abort", abstract: "Drop the transfer in progress; the running firmware is untouched.")

  @OptionGroup var device: DeviceOptions

  func run() throws { try answer(talk(device, request: .abort).answer, device: device) }
}

/// `confirm`: mark the running trial image good.
struct ConfirmCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "confirm", abstract: "Mark the image the device runs on trial as good.")

  @OptionGroup var device: DeviceOptions

  func run() throws {
    // Only a trial can be confirmed: with none, CONFIRM would succeed and say nothing true.
    let result = try talk(device) { NothingToConfirm($0) == nil ? .confirm : nil }
    guard let nothing = NothingToConfirm(result.info) else {
      if result.info.flags.contains(.bootStateRebuilt), result.answer?.status == .invalidState {
        FileHandle.standardError.write(
          Data(
            ("otactl: the device lost its boot state and takes CONFIRM of its running slot only from a "
              + "paired central ([bluez] require-pairing); its health check, or `otad mark-good` on the "
              + "device, confirms it otherwise\n").utf8))
      }
      try answer(result.answer, device: device)
      return
    }
    if device.json {
      JSONOutput.document(
        NothingToConfirmJSON(
          ok: nothing.exitCode == 0, message: nothing.message,
          runningVersion: "\(result.info.runningVersion)",
          runningSlot: "\(result.info.runningSlot)"))
    } else {
      print(nothing.message)
    }
    if nothing.exitStatus != .success { throw ExitCode(nothing.exitStatus) }
  }
}

func talk(_ device: DeviceOptions, request: Request?) throws -> (info: InfoRecord, answer: Response?) {
  try talk(device) { _ in request }
}

func talk(_ device: DeviceOptions, request: (InfoRecord) -> Request?) throws -> (
  info: InfoRecord, answer: Response?
) {
  try talk(device) { link, timeout in CommandSession.run(link: link, request: request, timeout: timeout) }
}

/// One `CommandSession` conversation with the device; a failure is said on standard error and
/// becomes the exit status.
func talk<Answer>(
  _ device: DeviceOptions,
  _ converse: (any CentralLink, Duration) -> Result<Answer, CommandSession.Failure>
) throws -> Answer {
  let link = try device.openLink()
  let timeout: Duration = device.isSimulated ? .seconds(10) : .seconds(30)
  switch converse(link, timeout) {
  case .success(let result):
    return result
  case .failure(.busy):
    // Refused as PREPARE is when the device is busy: the same exit status as push's.
    FileHandle.standardError.write(
      Data(
        "otactl: \(CommandSession.Failure.busy): it serves one central at a time, try again when the other one is done.\n"
          .utf8))
    throw ExitCode(.refused)
  case .failure(let failure):
    FileHandle.standardError.write(
      Data("otactl: \(failure). Check that the device runs and --device names it.\n".utf8))
    throw ExitCode(failure == .timedOut ? .timedOut : .unreachable)
  }
}

private func answer(_ response: Response?, device: DeviceOptions) throws {
  guard let response else { throw ExitCode(.refused) }
  let opcode = Opcode(rawValue: response.requestOpcode).map { "\($0)" } ?? "?"
  if device.json {
    JSONOutput.document(
      AnswerJSON(request: opcode, status: "\(response.status)", ok: response.status == .success))
  } else {
    print("\(opcode): \(response.status)")
  }
  if response.status != .success { throw ExitCode(.refused) }
}
