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
  case imageDataOverrun = 31
  case imageConfirmationDenied = 32
  case settingTestToActiveDenied = 33

  /// The generic code a version 1 client hears instead: Zephyr's `img_mgmt_translate_error_code`,
  /// case for case (a code it does not list is `EUNKNOWN`).
  public var generic: SMPReturnCode {
    switch self {
    case .ok: .ok
    case .noImage: .noEntry
    case .noFreeSlot, .currentVersionIsNewer, .imageAlreadyPending: .badState
    case .invalidSlot, .invalidOffset, .invalidLength, .invalidImageHeader, .invalidHash: .invalidValue
    case .unknown, .invalidTLV, .hashNotFound, .flashWriteFailed, .flashEraseFailed, .invalidImageHeaderMagic,
      .imageTooLarge, .imageDataOverrun, .imageConfirmationDenied, .settingTestToActiveDenied:
      .unknown
    }
  }
}

/// The OS group's own result codes (Zephyr's `OS_MGMT_ERR_*`).
public enum SMPOSReturnCode: UInt16, Equatable, Sendable {
  case unknown = 1
  case invalidFormat = 2

  /// Zephyr's `os_mgmt_translate_error_code`.
  public var generic: SMPReturnCode {
    switch self {
    case .unknown: .unknown
    case .invalidFormat: .invalidValue
    }
  }
}

/// What a command answers when it fails: a generic code, or a group's own (version 2's error map).
public enum SMPFailure: Error, Equatable, Sendable {
  case generic(SMPReturnCode)
  case image(SMPImageReturnCode)
  case os(SMPOSReturnCode)
}
