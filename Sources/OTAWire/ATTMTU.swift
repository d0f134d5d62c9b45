/// A connection's ATT MTU: the largest ATT packet either side sends, as negotiated by the Exchange
/// MTU procedure. LE requires at least 23 bytes; an attribute value is at most 512 bytes, so nothing
/// gains from more than 517. A write or a notification carries a 3-byte ATT header (opcode and
/// handle), which leaves `mtu − 3` bytes for its value.
///
/// The engines, both links and the wire's chunk sizes all reason about the same number; this type
/// keeps its bounds and its arithmetic in one place. It is what crosses the seams: the link events
/// (`PeripheralEvent.connected`, `.smpWrite`, `CentralEvent.connected`, a characteristic read), the
/// engines, the receiver host, the SMP notifications and the wire's sizing (chunk payload, write
/// size, report and page capacities). A peer's number is clamped once, where a link reads it from
/// BlueZ or the simulated link's hello and makes it an `ATTMTU`, and nowhere after. On the wire
/// (Info, the simulated link's hello) it is a plain integer.
public struct ATTMTU: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
  /// The ATT header of a write or a notification: opcode (1) and attribute handle (2).
  public static let headerSize = 3
  /// The LE minimum (ATT_MTU 23), what a connection has before any exchange.
  public static let minimum = ATTMTU(unchecked: 23)
  /// The largest MTU worth having: a 512-byte attribute value plus a Read Blob's 5 bytes.
  public static let maximum = ATTMTU(unchecked: 517)
  /// Every MTU a connection can have.
  public static let range = minimum.value...maximum.value

  /// The MTU in bytes, within `range`.
  public let value: Int

  /// Not `ATTMTU(23)`: that spelling is the literal initializer, which clamps through `range`.
  private init(unchecked value: Int) { self.value = value }

  /// The nearest MTU within `range`: what a peer's request or report of `value` comes to.
  public init(clamping value: Int) {
    self.value = min(max(value, Self.range.lowerBound), Self.range.upperBound)
  }

  /// A literal MTU (a default, a test's): clamped as any other number is.
  public init(integerLiteral value: Int) { self.init(clamping: value) }

  /// `value` when it lies within `range`, else nil.
  public init?(exactly value: Int) {
    guard Self.range.contains(value) else { return nil }
    self.value = value
  }

  /// The most value bytes one write (request or command) carries.
  public var maxWriteValue: Int { value - Self.headerSize }
  /// The most value bytes one notification carries.
  public var maxNotifyValue: Int { value - Self.headerSize }

  public var description: String { "\(value)" }

  public static func < (lhs: ATTMTU, rhs: ATTMTU) -> Bool { lhs.value < rhs.value }
}
