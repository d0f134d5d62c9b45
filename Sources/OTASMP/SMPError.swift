/// SMP's generic result codes (`rc`, Zephyr's `MGMT_ERR_*`), the same in versions 1 and 2.
public enum SMPReturnCode: UInt16, Equatable, Sendable {
  case ok = 0
  case unknown = 1
  case noMemory = 2
  case invalidValue = 3
  case timeout = 4
  case noEntry = 5
  case badState = 6
  case messageTooLarge = 7
  case notSupported = 8
  case corrupt = 9
  case busy = 10
  case accessDenied = 11
  case tooOld = 12
  case tooNew = 13
}

/// The image group's own result codes (Zephyr's `IMG_MGMT_ERR_*`), sent in version 2's
/// `err: {group: 1, rc}`; a version 1 client hears the generic code they map to.
public enum SMPImageReturnCode: UInt16, Equatable, Sendable {
  case ok = 0
  case unknown = 1
  case noImage = 3
  case invalidTLV = 5
  case hashNotFound = 8
  case noFreeSlot = 9
  case flashWriteFailed = 12
  case flashEraseFailed = 13
  case invalidSlot = 14
  case invalidOffset = 20
  case invalidLength = 21
  case invalidImageHeader = 22
  case invalidImageHeaderMagic = 23
  case invalidHash = 24
  case currentVersionIsNewer = 27
  case imageAlreadyPending = 28
  case imageTooLarge = 30
  case imageConfirmationDenied = 32
  case settingTestToActiveDenied = 33

  /// The generic code a version 1 client hears instead.
  public var generic: SMPReturnCode {
    switch self {
    case .ok: .ok
    case .unknown, .flashWriteFailed, .flashEraseFailed: .unknown
    case .noImage, .hashNotFound: .noEntry
    case .noFreeSlot, .imageAlreadyPending, .imageConfirmationDenied, .settingTestToActiveDenied: .badState
    case .invalidSlot, .invalidOffset, .invalidLength, .invalidImageHeader, .invalidImageHeaderMagic,
      .invalidHash,
      .invalidTLV:
      .invalidValue
    case .currentVersionIsNewer: .accessDenied
    case .imageTooLarge: .messageTooLarge
    }
  }
}

/// What a command answers when it fails: a generic code, or a group's own (version 2's error map).
public enum SMPFailure: Error, Equatable, Sendable {
  case generic(SMPReturnCode)
  case image(SMPImageReturnCode)
}
