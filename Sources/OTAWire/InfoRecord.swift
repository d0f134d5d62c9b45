/// The Info characteristic's value: capabilities and state in one read. Layout (little-endian),
/// documented in docs/PROTOCOL.md; fields are only ever appended, so a decoder takes the first
/// `minimumByteCount` bytes and ignores anything after them.
///
///     0  protocol version u8         21 slot capacity u32         43 outcome result u8
///     1  device state u8             25 window capacity u32       44 outcome from version (8)
///     2  running slot u8             29 max chunk payload u16     52 outcome to version (8)
///     3  flags u8                    31 transfer size u32         60 outcome reason u8
///     4  slot A version (8)          35 transfer crc32 u32        61 transfer version (8)
///     12 slot B version (8)          39 committed offset u32      69 outcome attempts used u8
///     20 inactive slot content u8                                 70 chunks dropped u32
///                                                                 74 features u32
///                                                                 78 L2CAP PSM u16
///     80 max operation length u32    84 running image size u32    88 running image crc32 u32
///     92 receive span u32            96 max frame length u32
///     100 kept activation (14, `KeptActivation`)                     114 end
///
/// Version 1 devices before the A/B boot work sent 69 bytes: a missing byte 69 reads as 0; devices
/// before the dropped-chunk count sent 70: a missing count reads as 0; devices before the features
/// field sent 74: missing features read as none; devices before the L2CAP channel sent 78: a missing
/// PSM reads as 0 (no channel); devices before operations sent at most 80: a missing max operation
/// length reads as 0 (no operations), a missing running image as size 0; devices before the receive
/// span sent 92: a missing span reads as the window capacity; devices before zstd frames sent 96: a
/// missing max frame length reads as 0 (no frames); devices before kept activations sent 100: a
/// missing kept activation reads as none.
public struct InfoRecord: Equatable, Sendable {
  public static let protocolVersion: UInt8 = 1
  public static let minimumByteCount = 69
  public static let byteCount = 114

  public struct Flags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The running slot is on trial: not yet confirmed.
    public static let runningOnTrial = Flags(rawValue: 1 << 0)
    /// VALIDATE refuses images without a valid signature.
    public static let signaturesRequired = Flags(rawValue: 1 << 1)
    /// Writes need an encrypted, bonded link.
    public static let pairingRequired = Flags(rawValue: 1 << 2)
    /// The boot state was lost and rebuilt from what the slots and the bootloader show, without
    /// settling which slot was the good one: PREPARE is refused until an operator confirms the
    /// running slot on the device (`otad mark-good`).
    public static let bootStateRebuilt = Flags(rawValue: 1 << 3)
    /// The device holds a decryption key: VALIDATE accepts MCUboot images encrypted for it.
    public static let decryptsImages = Flags(rawValue: 1 << 4)
    /// The device asks for its owner's consent before it activates an update.
    public static let consentRequired = Flags(rawValue: 1 << 5)
  }

  public var protocolVersion: UInt8 = InfoRecord.protocolVersion
  public var state: DeviceState
  public var runningSlot: SlotID
  public var flags: Flags
  public var slotVersions: SlotPair<Version>
  public var inactiveSlotContent: SlotContent
  public var slotCapacity: UInt32
  public var windowCapacity: UInt32
  public var maxChunkPayload: UInt16
  public var transfer: TransferStatus
  public var transferVersion: Version
  public var lastOutcome: UpdateOutcome
  /// Data writes the device dropped since it started (malformed, outside the window, not receiving);
  /// saturates at `UInt32.max`.
  public var chunksDropped: UInt32
  /// What the device supports beyond the base protocol; a central opts in with FEATURES.
  public var features: Features
  /// The PSM of the device's LE L2CAP channel for data (docs/PROTOCOL.md), 0 when it offers none.
  public var l2capPSM: UInt16
  /// The longest target range one data operation may produce (features bit 1); 0: the device
  /// cannot apply operations.
  public var maxOperationLength: UInt32 = 0
  /// The running slot's image as the boot state records it: what copy and patch operations read.
  /// Size 0 when the device does not know it (a factory state): then operations may read the whole
  /// slot, whose blocks BLOCK HASHES gives (features bit 2).
  public var runningImageSize: UInt32 = 0
  public var runningImageCRC: UInt32 = 0
  /// How far past the committed offset the device stores chunks and operations: at least the
  /// window capacity, so that a central may stream several windows ahead of the commits.
  public var receiveSpan: UInt32
  /// The most target bytes one zstd frame may produce (features bit 4); 0: no frames.
  public var maxFrameLength: UInt32 = 0
  /// The activation the device keeps (features bit 5): a deferred ACTIVATE or a SCHEDULE.
  public var keptActivation: KeptActivation = .none

  public init(
    state: DeviceState, runningSlot: SlotID, flags: Flags, slotVersions: SlotPair<Version>,
    inactiveSlotContent: SlotContent, slotCapacity: UInt32, windowCapacity: UInt32,
    maxChunkPayload: UInt16, transfer: TransferStatus, transferVersion: Version,
    lastOutcome: UpdateOutcome, chunksDropped: UInt32 = 0, features: Features = [], l2capPSM: UInt16 = 0
  ) {
    self.l2capPSM = l2capPSM
    self.state = state
    self.runningSlot = runningSlot
    self.flags = flags
    self.slotVersions = slotVersions
    self.inactiveSlotContent = inactiveSlotContent
    self.slotCapacity = slotCapacity
    self.windowCapacity = windowCapacity
    self.receiveSpan = windowCapacity
    self.maxChunkPayload = maxChunkPayload
    self.transfer = transfer
    self.transferVersion = transferVersion
    self.lastOutcome = lastOutcome
    self.chunksDropped = chunksDropped
    self.features = features
  }

  /// The version the device runs.
  public var runningVersion: Version { slotVersions[runningSlot] }

  public init(bytes: some Collection<UInt8>) throws(WireError) {
    var reader = ByteReader(bytes)
    // A field after byte 69 is read only when the whole of it is there (and so all before it).
    let count = reader.remaining
    guard reader.remaining >= InfoRecord.minimumByteCount else {
      throw .truncated(needed: InfoRecord.minimumByteCount, available: reader.remaining)
    }
    protocolVersion = try reader.readU8()
    guard protocolVersion >= 1 else { throw .invalidField("Info protocol version 0") }
    state = try Self.decode(DeviceState.self, try reader.readU8(), "device state")
    runningSlot = try Self.decode(SlotID.self, try reader.readU8(), "running slot")
    flags = Flags(rawValue: try reader.readU8())
    slotVersions = try SlotPair.bySlot { _ throws(WireError) in try Version(from: &reader) }
    inactiveSlotContent = try Self.decode(SlotContent.self, try reader.readU8(), "slot content")
    slotCapacity = try reader.readU32()
    windowCapacity = try reader.readU32()
    maxChunkPayload = try reader.readU16()
    let size = try reader.readU32()
    let crc32 = try reader.readU32()
    let committed = try reader.readU32()
    transfer = TransferStatus(state: state, size: size, crc32: crc32, committedOffset: committed)
    let result = try Self.decode(UpdateOutcome.Result.self, try reader.readU8(), "outcome")
    let from = try Version(from: &reader)
    let to = try Version(from: &reader)
    let reason = try Self.decode(UpdateOutcome.Reason.self, try reader.readU8(), "outcome reason")
    transferVersion = try Version(from: &reader)
    let attemptsUsed = reader.remaining > 0 ? try reader.readU8() : 0
    lastOutcome = UpdateOutcome(
      result: result, from: from, to: to, reason: reason, attemptsUsed: attemptsUsed)
    chunksDropped = count >= 74 ? try reader.readU32() : 0
    features = Features(rawValue: count >= 78 ? try reader.readU32() : 0)
    l2capPSM = count >= 80 ? try reader.readU16() : 0
    maxOperationLength = count >= 84 ? try reader.readU32() : 0
    runningImageSize = count >= 88 ? try reader.readU32() : 0
    runningImageCRC = count >= 92 ? try reader.readU32() : 0
    receiveSpan = count >= 96 ? try reader.readU32() : windowCapacity
    maxFrameLength = count >= 100 ? try reader.readU32() : 0
    keptActivation = count >= 114 ? try KeptActivation(from: &reader) : .none
  }

  public func append(to bytes: inout [UInt8]) {
    bytes.appendU8(protocolVersion)
    bytes.appendU8(state.rawValue)
    bytes.appendU8(runningSlot.rawValue)
    bytes.appendU8(flags.rawValue)
    for version in slotVersions.values { version.append(to: &bytes) }
    bytes.appendU8(inactiveSlotContent.rawValue)
    bytes.appendU32(slotCapacity)
    bytes.appendU32(windowCapacity)
    bytes.appendU16(maxChunkPayload)
    bytes.appendU32(transfer.size)
    bytes.appendU32(transfer.crc32)
    bytes.appendU32(transfer.committedOffset)
    bytes.appendU8(lastOutcome.result.rawValue)
    lastOutcome.from.append(to: &bytes)
    lastOutcome.to.append(to: &bytes)
    bytes.appendU8(lastOutcome.reason.rawValue)
    transferVersion.append(to: &bytes)
    bytes.appendU8(lastOutcome.attemptsUsed)
    bytes.appendU32(chunksDropped)
    bytes.appendU32(features.rawValue)
    bytes.appendU16(l2capPSM)
    bytes.appendU32(maxOperationLength)
    bytes.appendU32(runningImageSize)
    bytes.appendU32(runningImageCRC)
    bytes.appendU32(receiveSpan)
    bytes.appendU32(maxFrameLength)
    keptActivation.append(to: &bytes)
  }

  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    append(to: &bytes)
    return bytes
  }

  private static func decode<T: RawRepresentable>(_: T.Type, _ raw: UInt8, _ what: String) throws(WireError)
    -> T where T.RawValue == UInt8
  {
    guard let value = T(rawValue: raw) else { throw .invalidField("\(what) \(raw)") }
    return value
  }
}
