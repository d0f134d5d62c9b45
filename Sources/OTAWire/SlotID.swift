/// One of the two A/B slots. The raw values are written to disk and sent on the wire: never renumber.
public enum SlotID: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case a = 0
  case b = 1

  /// The slot that is not this one.
  public var other: SlotID { self == .a ? .b : .a }

  public var description: String { self == .a ? "A" : "B" }
}
