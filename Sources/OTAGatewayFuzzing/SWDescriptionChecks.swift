import OTAFuzzing
import OTAGateway

/// What a sw-description that reads must satisfy: a version; boards named as libconfig names a
/// setting (they are setting names) or "default"; and, when no two targets share a board (the one
/// shape `text(description:)` can write), written as `otactl image pack` writes it, it reads back equal.
public enum SWDescriptionChecks {
  public static func check(_ description: SWDescription) -> [InvariantViolation] {
    var found: [InvariantViolation] = []
    if description.version.isEmpty {
      found.append(InvariantViolation("version", "read with an empty version"))
    }
    for target in description.targets where !LibconfigShape.isName(target.board) {
      found.append(InvariantViolation("board name", "'\(target.board)' is no setting name"))
    }
    let boards = description.targets.map(\.board)
    guard Set(boards).count == boards.count else { return found }
    let text = description.text(description: "fuzz")
    do {
      let again = try SWDescription(text: text)
      if again != description {
        found.append(InvariantViolation("description round trip", "\(description) reads back as \(again)"))
      }
    } catch {
      found.append(InvariantViolation("description round trip", "its text is refused: \(error)\n\(text)"))
    }
    return found
  }
}
