import OTACBOR

/// The groups and commands this server knows (Zephyr's numbering).
public enum SMPGroup {
  public static let os: UInt16 = 0
  public static let image: UInt16 = 1

  public enum OS {
    public static let echo: UInt8 = 0
    public static let reset: UInt8 = 5
    public static let parameters: UInt8 = 6
    public static let info: UInt8 = 7
    public static let bootloaderInfo: UInt8 = 8
  }

  public enum Image {
    public static let state: UInt8 = 0
    public static let upload: UInt8 = 1
    public static let erase: UInt8 = 5
  }
}

/// One chunk of an image upload (image group, command 1), as decoded.
public struct SMPUpload: Equatable, Sendable {
  /// The image number: otad has one image (0).
  public var image: UInt64
  /// Where `data` goes in the image.
  public var offset: UInt64
  /// The whole image's length: required with the first chunk (offset 0), ignored after.
  public var length: UInt64?
  public var data: [UInt8]
  /// The SHA-256 (or a prefix of it) of the whole image, with the first chunk: lets a device tell a
  /// resumed upload of the same image from a new one; a full one (32 bytes) is checked against the
  /// uploaded bytes at the end (`match`). Nil when absent or empty; longer than 32 bytes is refused.
  public var sha: [UInt8]?
  /// "Upgrade only": refuse an image whose version is not newer.
  public var upgrade: Bool

  public init(
    image: UInt64 = 0, offset: UInt64, length: UInt64?, data: [UInt8], sha: [UInt8]?, upgrade: Bool = false
  ) {
    self.image = image
    self.offset = offset
    self.length = length
    self.data = data
    self.sha = sha
    self.upgrade = upgrade
  }
}

/// A decoded request whose answer needs the device: the host carries it out and answers through
/// `SMPServer.respond(to:with:)`.
public enum SMPDeviceCommand: Equatable, Sendable {
  /// OS reset: answer, then restart (`force` asks to skip the device's own veto).
  case reset(force: Bool)
  /// Image state write: with `confirm` false, test the image with `hash` on the next reset; with
  /// `confirm` true, make the image with `hash` (the running one without a hash) permanent.
  case stateWrite(hash: [UInt8]?, confirm: Bool)
  case upload(SMPUpload)
  /// Erase the given slot (1, the inactive one, unless said otherwise).
  case erase(slot: UInt64)
}
