import Foundation

/// Writes otactl's JSON: one compact line per event (`--json` on push) or one pretty document (the
/// other commands), keys sorted. Every value is a Codable type, so a field cannot silently drop out;
/// a value JSON cannot carry (a non-finite number) is said on standard error, never skipped quietly.
enum JSONOutput {
  static func line(_ value: some Encodable) {
    write(value, formatting: [.sortedKeys])
  }

  static func document(_ value: some Encodable) {
    write(value, formatting: [.prettyPrinted, .sortedKeys])
  }

  private static func write(_ value: some Encodable, formatting: JSONEncoder.OutputFormatting) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = formatting.union(.withoutEscapingSlashes)
    do {
      FileHandle.standardOutput.write(try encoder.encode(value) + Data("\n".utf8))
    } catch {
      FileHandle.standardError.write(Data("otactl: cannot write \(type(of: value)) as JSON: \(error)\n".utf8))
    }
  }
}

/// A JSON value that is written as `null` when absent (where a script expects the key to be there),
/// unlike Codable's default for optionals, which leaves the key out.
struct Nullable<Value: Encodable>: Encodable {
  let value: Value?

  init(_ value: Value?) { self.value = value }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if let value { try container.encode(value) } else { try container.encodeNil() }
  }
}
