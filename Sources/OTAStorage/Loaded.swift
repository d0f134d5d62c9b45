import OTAWire

/// A record as read from storage: there was none, it failed its checks (and why), or its value.
/// One shape for every record the device keeps (the boot state, the transfer journal).
public enum Loaded<Value> {
  /// Nothing was ever written (or it was removed).
  case missing
  /// It failed its checks: `reason` says which.
  case damaged(reason: String)
  case present(Value)

  /// The value when present.
  public var value: Value? { if case .present(let value) = self { value } else { nil } }

  public var isDamaged: Bool { if case .damaged = self { true } else { false } }

  /// The same outcome with the value transformed.
  public func map<T>(_ transform: (Value) -> T) -> Loaded<T> {
    switch self {
    case .missing: .missing
    case .damaged(let reason): .damaged(reason: reason)
    case .present(let value): .present(transform(value))
    }
  }

  /// `missing`, `damaged` or `present`: how status reports name the outcome.
  public var summary: String {
    switch self {
    case .missing: "missing"
    case .damaged: "damaged"
    case .present: "present"
    }
  }
}

extension Loaded: Equatable where Value: Equatable {}
extension Loaded: Sendable where Value: Sendable {}

extension Loaded {
  /// Decodes `bytes` (nil: no record) into a value, or the reason it is damaged.
  public static func decoding(
    _ bytes: [UInt8]?, _ decode: ([UInt8]) throws(WireError) -> Value
  ) -> Loaded {
    guard let bytes else { return .missing }
    do {
      return .present(try decode(bytes))
    } catch {
      return .damaged(reason: error.reason)
    }
  }
}
