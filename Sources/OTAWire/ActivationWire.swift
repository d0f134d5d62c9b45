/// SCHEDULE's payload: the wall-clock window, in seconds since 1970 UTC, within which the device
/// activates the validated image on its own, and whether for good (no trial boot).
///
///     0 not before u32   4 not after u32 (0: no end)   8 flags u8 (bit 0 permanent)
public struct ActivationWindow: Equatable, Sendable {
  public static let byteCount = 9
  /// The first second at which the device may activate.
  public var notBefore: UInt32
  /// The first second at which it no longer may: the kept activation lapses, the image stays
  /// validated. Nil: no end.
  public var notAfter: UInt32?
  public var permanent: Bool

  public init(notBefore: UInt32, notAfter: UInt32?, permanent: Bool) {
    self.notBefore = notBefore
    self.notAfter = notAfter
    self.permanent = permanent
  }

  init(from reader: inout ByteReader) throws(WireError) {
    notBefore = try reader.readU32()
    let end = try reader.readU32()
    notAfter = end == 0 ? nil : end
    let flags = try reader.readU8()
    guard flags & ~Request.permanentFlag == 0 else {
      throw .invalidField("SCHEDULE flags 0x\(String(flags, radix: 16)) use reserved bits")
    }
    permanent = flags & Request.permanentFlag != 0
  }

  func append(to bytes: inout [UInt8]) {
    bytes.appendU32(notBefore)
    bytes.appendU32(notAfter ?? 0)
    bytes.appendU8(permanent ? Request.permanentFlag : 0)
  }
}

/// What holds an activation the device keeps (Info offset 101, and ACTIVATE's `deferred` answer).
/// Values are the wire contract: never renumber.
public enum ActivationHoldReason: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case none = 0
  /// An application on the device holds an update lock.
  case locked = 1
  /// The device asks for its owner's consent before it activates, and none was given yet.
  case awaitingConsent = 2
  /// The owner postponed this update.
  case postponed = 3
  /// The window the central asked for (SCHEDULE) has not opened yet.
  case beforeWindow = 4

  public var description: String {
    switch self {
    case .none: "nothing"
    case .locked: "an update lock"
    case .awaitingConsent: "awaiting consent"
    case .postponed: "postponed"
    case .beforeWindow: "before its window"
    }
  }
}

/// ACTIVATE's `deferred` answer: what holds the activation and how many seconds from now to ask
/// again (0: the device cannot say; it activates on its own once nothing holds it).
///
///     0 reason u8   1 ask again after u32
public struct ActivationDeferral: Equatable, Sendable {
  public static let byteCount = 5
  public var reason: ActivationHoldReason
  public var askAgainAfter: UInt32

  public init(reason: ActivationHoldReason, askAgainAfter: UInt32) {
    self.reason = reason
    self.askAgainAfter = askAgainAfter
  }

  init(from reader: inout ByteReader) throws(WireError) {
    let raw = try reader.readU8()
    guard let reason = ActivationHoldReason(rawValue: raw) else {
      throw .invalidField("activation hold reason \(raw)")
    }
    self.reason = reason
    askAgainAfter = try reader.readU32()
  }

  func append(to bytes: inout [UInt8]) {
    bytes.appendU8(reason.rawValue)
    bytes.appendU32(askAgainAfter)
  }
}

/// Info's activation fields (offset 100 on, features bit 5): the activation the device keeps.
///
///     100 kept activation u8 (0 none, 1 a trial, 2 permanent)   101 hold reason u8
///     102 not before u32   106 not after u32 (0: no end)   110 ask again after u32   114 end
public struct KeptActivation: Equatable, Sendable {
  public static let byteCount = 14
  public enum Kind: UInt8, Sendable {
    case none = 0
    case trial = 1
    case permanent = 2
  }
  public var kind: Kind
  public var hold: ActivationHoldReason
  /// Seconds since 1970 UTC; 0: at once.
  public var notBefore: UInt32
  /// Seconds since 1970 UTC; nil: no end.
  public var notAfter: UInt32?
  public var askAgainAfter: UInt32

  public init(
    kind: Kind, hold: ActivationHoldReason, notBefore: UInt32 = 0, notAfter: UInt32? = nil,
    askAgainAfter: UInt32 = 0
  ) {
    self.kind = kind
    self.hold = hold
    self.notBefore = notBefore
    self.notAfter = notAfter
    self.askAgainAfter = askAgainAfter
  }

  public static let none = KeptActivation(kind: .none, hold: .none)

  init(from reader: inout ByteReader) throws(WireError) {
    let rawKind = try reader.readU8()
    guard let kind = Kind(rawValue: rawKind) else { throw .invalidField("kept activation \(rawKind)") }
    let rawHold = try reader.readU8()
    guard let hold = ActivationHoldReason(rawValue: rawHold) else {
      throw .invalidField("activation hold reason \(rawHold)")
    }
    let notBefore = try reader.readU32()
    let end = try reader.readU32()
    self.init(
      kind: kind, hold: hold, notBefore: notBefore, notAfter: end == 0 ? nil : end,
      askAgainAfter: try reader.readU32())
  }

  func append(to bytes: inout [UInt8]) {
    bytes.appendU8(kind.rawValue)
    bytes.appendU8(hold.rawValue)
    bytes.appendU32(notBefore)
    bytes.appendU32(notAfter ?? 0)
    bytes.appendU32(askAgainAfter)
  }
}
