/// The boot pointer's x-ray under the real U-Boot (`ota-lab --bootloader uboot`): the bootloader's own
/// variables as `fw_printenv` read them, U-Boot's last choices as the harness logged them, and one
/// sentence on how they stand against otad's view. Nothing here decides a boot: U-Boot did, and this
/// only says what it left.
public enum UBootXray {
  /// The variables the boot script (Scripts/bootloaders/uboot/boot.cmd) reads and writes: the order
  /// and the counts otad writes, the kernel arguments U-Boot builds and saves on every boot.
  public static let names = ["BOOT_ORDER", "BOOT_A_LEFT", "BOOT_B_LEFT", "bootargs"]
  /// How many of U-Boot's last boots the panel lists.
  public static let recentBoots = 4

  /// The panel's part. `environment`: the variables `fw_printenv` printed (parsed), or why it could
  /// not; `boots`: boots.log, oldest first; `poweredOn`: the board is on now, with `now` (Unix time)
  /// to say for how long; `otad`: otad's view; `pointer`: what otad's U-Boot backend reads the
  /// variables as.
  public static func view(
    environment: Result<[String: String], EnvironmentUnreadable>, boots: [UBootBoot],
    poweredOn: UBootPowerOn?,
    now: Double, otad: LabSnapshot.Boot, pointer: String, config: String
  ) -> LabSnapshot.BootVariables {
    let variables: [[String]]
    switch environment {
    case .success(let values): variables = names.map { [$0, values[$0] ?? "(not set)"] }
    case .failure(let why): variables = [["fw_printenv", "cannot read it: \(why.reason)"]]
    }
    var view = LabSnapshot.BootVariables(
      backend: "U-Boot, as fw_printenv -c \(config) reads them", variables: variables, pointer: pointer)
    view.separator = "="
    view.choices = boots.suffix(recentBoots).map(\.sentence)
    view.choosing = poweredOn.map { choosing($0, now: now) }
    view.caption = caption(environment: environment, last: boots.last, poweredOn: poweredOn, otad: otad)
    return view
  }

  /// Why `fw_printenv` read nothing (its own words): an erased or torn environment, a missing tool.
  public struct EnvironmentUnreadable: Error, Equatable, Sendable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
  }

  static func choosing(_ on: UBootPowerOn, now: Double) -> String {
    "the bootloader is choosing: the board is powered on (boot \(on.boot), \(format2(max(0, now - on.since))) s"
      + " so far); U-Boot reads BOOT_ORDER, counts a boot, saves and starts a kernel"
  }

  /// How otad's view and the bootloader's stand, in a sentence or two; while the board is on, after
  /// saying that the bootloader is choosing.
  public static func caption(
    environment: Result<[String: String], EnvironmentUnreadable>, last: UBootBoot?, poweredOn: UBootPowerOn?,
    otad: LabSnapshot.Boot
  ) -> String {
    let relation = relation(environment: environment, last: last, otad: otad)
    guard poweredOn != nil else { return relation }
    return "The bootloader is choosing now; otad waits for the kernel U-Boot starts (a boot takes seconds"
      + " under emulation). Until it has booted: " + relation
  }

  static func relation(
    environment: Result<[String: String], EnvironmentUnreadable>, last: UBootBoot?, otad: LabSnapshot.Boot
  ) -> String {
    let values: [String: String]
    switch environment {
    case .failure:
      return "fw_printenv cannot read U-Boot's environment: at the next power-on U-Boot boots on its"
        + " built-in defaults, and otad's boot stage writes its variables again."
    case .success(let read): values = read
    }
    guard let last else { return "U-Boot has not booted this board yet." }
    let order = values["BOOT_ORDER"] ?? ""
    let first = order.split(separator: " ").first.map(String.init)
    let quoted = "BOOT_ORDER=\"\(order)\""
    if last.kernel != "started" {
      return "U-Boot's last boot did not start a kernel (\(last.sentence)): the harness powers the board on"
        + " again, and U-Boot counts another boot."
    }
    if let running = otad.running, running != last.chose {
      return "They disagree for a moment: U-Boot's last boot (\(last.number)) started \(last.chose), otad"
        + " still says \(running) runs: it reads the kernel command line again when it starts."
    }
    if let first, first != last.chose {
      let count = values["BOOT_\(first)_LEFT"].map { ", BOOT_\(first)_LEFT=\($0)" } ?? ""
      return "They disagree for a moment, and that is the lesson: otad has written \(quoted)\(count),"
        + " so the next boot tries \(first) first, yet the board runs \(last.chose), what U-Boot chose at its"
        + " last boot (\(last.number)). U-Boot reads the variables only at power-on: the restart makes"
        + " them true."
    }
    if first == nil {
      return "BOOT_ORDER is not set: at the next power-on boot.cmd's default order (\"A B\") applies;"
        + " U-Boot's last boot (\(last.number)) chose \(last.chose)."
    }
    return "They agree: \(quoted) puts \(last.chose) first, U-Boot chose \(last.chose) at its last boot"
      + " (\(last.number)) and otad runs \(otad.running ?? last.chose)"
      + (otad.trialSlot == last.chose ? " on trial." : otad.confirmed == last.chose ? ", confirmed." : ".")
  }
}
