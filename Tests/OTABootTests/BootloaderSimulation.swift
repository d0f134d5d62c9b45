import OTAWire

/// The bootloader halves of the schemes, as docs/BOOT-BACKENDS.md gives them, over a dictionary of
/// variables: what the boot script would start, and the variables it saves before starting it.
enum BootloaderSimulation {
  /// RAUC's U-Boot script: the first slot in BOOT_ORDER with boots left, its count decremented; nil
  /// when no slot has any (the script then resets the counts to 3 and resets the board).
  static func uboot(_ environment: inout [String: String]) -> SlotID? {
    for name in (environment["BOOT_ORDER"] ?? "A B").split(separator: " ") {
      let key = "BOOT_\(name)_LEFT"
      guard let left = Int(environment[key] ?? "3"), left > 0 else { continue }
      environment[key] = String(left - 1)
      return name == "A" ? .a : .b
    }
    environment["BOOT_A_LEFT"] = "3"
    environment["BOOT_B_LEFT"] = "3"
    return nil
  }

  /// The grub.cfg of the docs: the first slot in ORDER that is OK and not tried, marked tried; else
  /// the last OK slot in ORDER (the primary), unmarked; else slot A.
  static func grub(_ environment: inout [String: String]) -> SlotID {
    let order = (environment["ORDER"] ?? "A B").split(separator: " ").map(String.init)
    for name in order where environment["\(name)_OK"] == "1" && environment["\(name)_TRY"] == "0" {
      environment["\(name)_TRY"] = "1"
      return name == "A" ? .a : .b
    }
    let fallback = order.last { environment["\($0)_OK"] == "1" } ?? "A"
    return fallback == "A" ? .a : .b
  }
}
