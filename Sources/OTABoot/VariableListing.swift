import OTAStorage
import OTAWire

/// Parses the `NAME=value` lines that `fw_printenv` and `grub-editenv FILE list` print. A value runs
/// from the first "=" to the end of the line (it may hold spaces and more "="); lines without "=" and
/// `#` comments are skipped. A name listed twice keeps its last value.
public enum VariableListing {
  public static func parse(_ text: String) -> [String: String] {
    var variables: [String: String] = [:]
    for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
      guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "="), equals != line.startIndex else {
        continue
      }
      variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return variables
  }

  /// The names among `wanted` whose value in `current` differs (a missing variable differs from any
  /// value).
  static func differences(between current: [String: String], and wanted: [(name: String, value: String)])
    -> [String]
  {
    wanted.filter { current[$0.name] != $0.value }.map(\.name)
  }
}

extension BootPointer {
  /// RAUC's order variable ("B A": a trial of B over A; "A": A alone) read back, and the slot
  /// the kernel command line says was started.
  static func fromOrder(_ order: String?, booted: SlotID?) -> BootPointer {
    let slots = (order ?? "").split(separator: " ").compactMap { name -> SlotID? in
      switch name {
      case "A": .a
      case "B": .b
      default: nil
      }
    }
    guard let primary = slots.last else { return BootPointer(booted: booted) }
    let trial = slots.count > 1 && slots[0] != primary ? slots[0] : nil
    return BootPointer(primary: primary, trial: trial, booted: booted)
  }
}
