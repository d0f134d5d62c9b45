import ArgumentParser
import OTATrust

extension SigningAlgorithm: ExpressibleByArgument {}

extension PublicKeyFormat: ExpressibleByArgument {}

extension SecurityCounter: ExpressibleByArgument {
  public init?(argument: String) { self.init(text: argument) }
}

/// An unsigned number given as decimal or `0x…` hex (also `0o…`, `0b…`), as imgtool takes sizes
/// and addresses. Range checks belong to whoever uses it, so their messages can say why.
struct NumberArgument: ExpressibleByArgument, CustomStringConvertible {
  let value: UInt64

  init(_ value: UInt64) { self.value = value }

  init?(argument: String) {
    guard let value = NumberText.unsigned(argument) else { return nil }
    self.value = value
  }

  var description: String { "0x" + String(value, radix: 16) }
  var defaultValueDescription: String { description }
}
