import OTALink
import OTAWire

/// `otactl info --json`: the device's Info, field by field, and its identity from the Device
/// Information Service (`serial`, `model`, `hardwareRevision`: null from a device that does not
/// serve them).
struct InfoJSON: Encodable {
  struct Transfer: Encodable {
    let state: String
    let size: Int
    let crc32: String
    let committed: Int
    let version: String
  }

  let state: String
  let runningSlot: String
  let runningVersion: String
  let onTrial: Bool
  let signaturesRequired: Bool
  /// Info flag bit 4: the device holds a decryption key for encrypted images.
  let decryptsImages: Bool
  let pairingRequired: Bool
  let bootStateRebuilt: Bool
  /// Info flag bit 5: the device asks its owner's consent before it activates an update.
  let consentRequired: Bool
  /// Info offset 100 (features bit 5): the activation the device keeps; null when none.
  let keptActivation: Nullable<KeptActivationJSON>
  let slotVersions: [String]
  let inactiveSlot: String
  let slotCapacity: Int
  let windowCapacity: Int
  let maxChunkPayload: Int
  let chunksDropped: Int
  /// Data operations (features bit 1): their limit (0: none), and the running image they read.
  let maxOperationLength: Int
  let runningImageSize: Int
  let runningImageCRC32: String
  /// zstd frames (features bit 4): the most target bytes one may produce (0: none).
  let maxFrameLength: Int
  let transfer: Transfer
  let lastOutcome: OutcomeJSON
  let serial: Nullable<String>
  let model: Nullable<String>
  let hardwareRevision: Nullable<String>

  init(_ info: InfoRecord, identity: DeviceIdentity) {
    serial = Nullable(identity.serial)
    model = Nullable(identity.model)
    hardwareRevision = Nullable(identity.hardwareRevision)
    state = "\(info.state)"
    runningSlot = "\(info.runningSlot)"
    runningVersion = "\(info.runningVersion)"
    onTrial = info.flags.contains(.runningOnTrial)
    signaturesRequired = info.flags.contains(.signaturesRequired)
    decryptsImages = info.flags.contains(.decryptsImages)
    pairingRequired = info.flags.contains(.pairingRequired)
    bootStateRebuilt = info.flags.contains(.bootStateRebuilt)
    consentRequired = info.flags.contains(.consentRequired)
    keptActivation = Nullable(KeptActivationJSON(info.keptActivation))
    slotVersions = info.slotVersions.values.map { "\($0)" }
    inactiveSlot = "\(info.inactiveSlotContent)"
    slotCapacity = Int(info.slotCapacity)
    windowCapacity = Int(info.windowCapacity)
    maxChunkPayload = Int(info.maxChunkPayload)
    chunksDropped = Int(info.chunksDropped)
    maxOperationLength = Int(info.maxOperationLength)
    runningImageSize = Int(info.runningImageSize)
    maxFrameLength = Int(info.maxFrameLength)
    let running = String(info.runningImageCRC, radix: 16)
    runningImageCRC32 = String(repeating: "0", count: max(0, 8 - running.count)) + running
    let crc = String(info.transfer.crc32, radix: 16)
    transfer = Transfer(
      state: "\(info.transfer.state)", size: Int(info.transfer.size),
      crc32: String(repeating: "0", count: max(0, 8 - crc.count)) + crc,
      committed: Int(info.transfer.committedOffset), version: "\(info.transferVersion)")
    lastOutcome = OutcomeJSON(info.lastOutcome)
  }
}

/// The answer to a control-point request (`abort`, `confirm`).
struct AnswerJSON: Encodable {
  let request: String
  let status: String
  let ok: Bool
}

/// `otactl confirm` when there is no trial to confirm: nothing was sent.
struct NothingToConfirmJSON: Encodable {
  let request = "confirm"
  let sent = false
  let ok: Bool
  let message: String
  let runningVersion: String
  let runningSlot: String
}
