import OTAFuzzing
import OTAGateway

/// The `libconfig` fuzz target: the input as sw-description text, for `LibconfigParser.parse` and
/// `SWDescription(text:)`. Invariants: nothing traps; a value that parses has the shape the parser
/// promises (LibconfigShape: its depth bound, setting names, scalars in arrays, no more values than
/// bytes), written out in libconfig (LibconfigRendering) it parses to an equal value and writes the
/// same again; a description reads only from text that parses, and holds up (SWDescriptionChecks).
public enum LibconfigFuzzer {
  public static func check(_ input: [UInt8]) -> [InvariantViolation] {
    let text = String(decoding: input, as: UTF8.self)
    let description = try? SWDescription(text: text)
    guard let value = try? LibconfigParser.parse(text) else {
      return description == nil
        ? [] : [InvariantViolation("description without libconfig", "read from text that does not parse")]
    }
    var found = LibconfigShape.violations(value, inputCount: input.count)
    found += roundTrip(value)
    if let description { found += SWDescriptionChecks.check(description) }
    return found
  }

  public static func roundTrip(_ value: LibconfigValue) -> [InvariantViolation] {
    let written = LibconfigRendering.text(value)
    let again: LibconfigValue
    do {
      again = try LibconfigParser.parse(written)
    } catch {
      return [InvariantViolation("libconfig round trip", "its text is refused: \(error)\n\(written)")]
    }
    if again != value {
      return [
        InvariantViolation("libconfig round trip", "\(written)\nparses as \(LibconfigRendering.text(again))")
      ]
    }
    if LibconfigRendering.text(again) != written {
      return [InvariantViolation("libconfig canonical", "written twice, two texts:\n\(written)")]
    }
    return []
  }
}
