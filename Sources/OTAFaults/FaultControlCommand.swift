/// What the fault control takes (`otad fault ...` sends one line, the daemon answers and closes):
///
///     add <fault>      answers "added fault N: <fault>"
///     remove <N>       answers "removed fault N"
///     clear            answers "cleared N fault(s)"
///     list             answers one line per fault, or "no faults"
///
/// An answer that starts with "error: " says what was wrong; nothing changed then.
public enum FaultControlCommand: Equatable, Sendable {
  case add(Fault)
  case remove(Int)
  case clear
  case list

  /// The longest line the control reads: a client that sends more is answered with an error.
  public static let maxLineLength = 512

  public init(line: String) throws(FaultSpecError) {
    let trimmed = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    switch (trimmed.first.map(String.init), trimmed.count > 1 ? String(trimmed[1]) : nil) {
    case ("add", let fault?): self = .add(try Fault(parsing: fault))
    case ("remove", let id?):
      guard let number = Int(id), number > 0 else {
        throw FaultSpecError("remove takes a fault's number, not '\(id)'")
      }
      self = .remove(number)
    case ("clear", nil): self = .clear
    case ("list", nil): self = .list
    default: throw FaultSpecError("'\(line)': use add FAULT, remove N, clear or list")
    }
  }

  /// The line a client sends.
  public var line: String {
    switch self {
    case .add(let fault): "add \(fault)"
    case .remove(let id): "remove \(id)"
    case .clear: "clear"
    case .list: "list"
    }
  }

  /// Carries the command out on `book`: the answer, and whether the book changed (to be saved).
  public func apply(to book: inout FaultBook) -> (answer: String, changed: Bool) {
    switch self {
    case .add(let fault):
      guard let id = book.add(fault) else {
        return (
          "error: the device holds \(FaultBook.capacity) faults already: remove or clear some first", false
        )
      }
      return ("added fault \(id): \(fault)", true)
    case .remove(let id):
      return book.remove(id: id)
        ? ("removed fault \(id)", true) : ("error: no fault \(id) (list shows them)", false)
    case .clear:
      let count = book.clear()
      return ("cleared \(count) fault\(count == 1 ? "" : "s")", count > 0)
    case .list:
      guard !book.isEmpty else { return ("no faults", false) }
      let lines = book.entries.map { entry in
        "\(entry.id): \(entry.fault) (fired \(entry.fired)\(entry.spent ? ", spent" : ""); from the \(entry.origin.rawValue))"
      }
      return (lines.joined(separator: "\n"), false)
    }
  }
}
