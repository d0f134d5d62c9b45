/// Protocol features beyond version 1's base, as bits of a u32: Info (offset 74) announces the
/// ones a device supports, and a central turns them on for its connection with FEATURES. A device
/// uses a feature only with a central that asked for it, so an older central never sees it.
public struct Features: OptionSet, Sendable, Hashable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  /// Bit 0: the device notifies the missing ranges of the open windows (`MissingReport`) as soon
  /// as later chunks prove them lost, and a WINDOW with a gap waits for the resend instead of
  /// failing with "missing data".
  public static let missingRanges = Features(rawValue: 1 << 0)

  /// Bit 1: every data write is one `DataOperation` (raw, deflate, copy or patch bytes in the
  /// target image's offset space) instead of a plain chunk. Info's operation fields (offset 80 on)
  /// give its limit and the running image a central must know to copy from it.
  public static let operations = Features(rawValue: 1 << 1)

  /// Bit 2: the control point answers BLOCK HASHES (opcode 0x09): the running image's block hashes
  /// at a block size the central chooses, a page per answer. A request and its answer: nothing to
  /// turn on with FEATURES. otad announces it with bit 1 (the hashes are for copy operations).
  public static let blockHashRequests = Features(rawValue: 1 << 2)

  /// Bit 3, with bit 1: a data write holds one or more operations, each after its length u16
  /// (`PackedOperations`), so that short operations share a write.
  public static let packedOperations = Features(rawValue: 1 << 3)

  /// Bit 4, with bit 1: a data write may be a part of a zstd frame (`DataOperation` kind 0x04),
  /// coded against the running image and reassembled by the device up to Info's max frame length
  /// (offset 96) of target bytes, then decoded as one operation.
  public static let zstdFrames = Features(rawValue: 1 << 4)

  /// Bit 5: the control point takes SCHEDULE (opcode 0x0A), and Info carries the activation
  /// fields (offset 100 on): whether an activation is kept, what holds it, its window. A request
  /// and its answer: nothing to turn on with FEATURES.
  public static let scheduledActivation = Features(rawValue: 1 << 5)

  /// The features FEATURES turns on; the others (BLOCK HASHES) need no opt-in, and FEATURES
  /// never lists them.
  public static let optIn: Features = [.missingRanges, .operations, .packedOperations, .zstdFrames]

  /// Everything this implementation knows.
  public static let all: Features = [
    .missingRanges, .operations, .blockHashRequests, .packedOperations, .zstdFrames, .scheduledActivation,
  ]
}
