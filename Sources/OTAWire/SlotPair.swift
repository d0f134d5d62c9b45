/// One value per A/B slot: the slots' paths, media, versions, capacities, evidence. Indexed by
/// `SlotID`, so there is no count to check and no index to get wrong.
public struct SlotPair<Value> {
  public var a: Value
  public var b: Value

  public init(a: Value, b: Value) {
    self.a = a
    self.b = b
  }

  /// The same value for both slots.
  public init(repeating value: Value) {
    self.init(a: value, b: value)
  }

  /// Each slot's value from `make`, slot A first. (A static function, not an initializer: a trailing
  /// closure would otherwise also fit `init(repeating:)`.)
  public static func bySlot<Failure: Error>(_ make: (SlotID) throws(Failure) -> Value) throws(Failure)
    -> SlotPair
  {
    let a = try make(.a)
    return SlotPair(a: a, b: try make(.b))
  }

  public subscript(slot: SlotID) -> Value {
    get {
      switch slot {
      case .a: a
      case .b: b
      }
    }
    set {
      switch slot {
      case .a: a = newValue
      case .b: b = newValue
      }
    }
  }

  /// Both values transformed, slot A first.
  public func map<T, Failure: Error>(_ transform: (Value) throws(Failure) -> T) throws(Failure) -> SlotPair<T>
  {
    let a = try transform(a)
    return SlotPair<T>(a: a, b: try transform(b))
  }

  /// Both values transformed with their slot, slot A first.
  public func mapWithSlot<T, Failure: Error>(_ transform: (SlotID, Value) throws(Failure) -> T)
    throws(Failure)
    -> SlotPair<T>
  {
    let a = try transform(.a, a)
    return SlotPair<T>(a: a, b: try transform(.b, b))
  }

  /// The two values, slot A first: the order every on-disk and wire format writes them in.
  public var values: [Value] { [a, b] }

  /// The slot whose value satisfies `predicate`, A first; nil when neither does.
  public func firstSlot(where predicate: (Value) throws -> Bool) rethrows -> SlotID? {
    if try predicate(a) { return .a }
    if try predicate(b) { return .b }
    return nil
  }
}

extension SlotPair: Equatable where Value: Equatable {}
extension SlotPair: Hashable where Value: Hashable {}
extension SlotPair: Sendable where Value: Sendable {}
extension SlotPair: Encodable where Value: Encodable {}
extension SlotPair: Decodable where Value: Decodable {}

extension SlotPair: CustomStringConvertible {
  public var description: String { "A: \(a), B: \(b)" }
}
