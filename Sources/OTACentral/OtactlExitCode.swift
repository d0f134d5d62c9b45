/// Every way `otactl` ends, one code per meaning across all its commands (`push`, `info`,
/// `confirm`, `activate`, `abort`, `scan`, `image …`). `otactl --help` and docs/OTACTL.md list them from here.
/// Scripts depend on these numbers: never renumber, never give a number a second meaning.
public enum OtactlExitCode: Int32, CaseIterable, Sendable {
  case success = 0
  case cannotWrite = 1
  case unreachable = 3
  case tooLarge = 4
  case transferFailed = 5
  case validationFailed = 6
  case rolledBack = 7
  case timedOut = 8
  case refused = 9
  case imageUnusable = 10
  case signatureInvalid = 11
  case downgradeRefused = 12
  case storageFailed = 13
  case notAllConfirmed = 14
  case cannotDecrypt = 15
  case activationKept = 16
  case declined = 17
  case usage = 64

  /// What the code means, in a few words (the help's list).
  public var meaning: String {
    switch self {
    case .success: "success"
    case .cannotWrite: "an output file could not be written (image commands)"
    case .unreachable: "device not reachable"
    case .tooLarge: "image too large for the slot"
    case .transferFailed: "a window failed after its retries (CRC mismatch, missing data)"
    case .validationFailed: "validation failed: CRC, MCUboot header, hash or version (push, image inspect)"
    case .rolledBack:
      "rolled back, another version after the restart, not confirmed in time, or confirm after a rollback"
    case .timedOut: "the device stopped answering"
    case .refused: "refused by the device (also busy with another central), or a protocol error"
    case .imageUnusable: "the image file cannot be read, or is not an image that can be used"
    case .signatureInvalid: "no trusted signature verifies (push, image inspect)"
    case .downgradeRefused: "downgrade refused: an older version or security counter"
    case .storageFailed: "the device's storage is full or failing"
    case .notAllConfirmed:
      "push to several devices: not every one ended confirmed (the summary says which and why)"
    case .cannotDecrypt: "the device cannot decrypt the encrypted image (no decryption key, or not its key)"
    case .activationKept:
      "validated and kept, not activated yet: the device deferred the activation (an update lock, consent, a "
        + "postponement) and carries it out itself once nothing holds it (push, activate)"
    case .declined: "the device's owner declined the update; the device dropped the image (push, activate)"
    case .usage: "bad arguments, or an unreadable key (refused before anything is sent or written)"
    }
  }

  /// The list for `--help`: "0 success, 1 …, 64 …".
  public static var helpList: String {
    allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "; ")
  }
}
