/// What the lab saw change on the U-Boot board, newest last: each new reading of the boot script's
/// counters (fw_printenv), each power-on (boot-once.py's powered-on file). A boot takes a fraction of
/// a second under qemu here, and otad confirms a good trial right after it: the moment the two views
/// disagree passes faster than the page asks; this list keeps it. Sampled by the lab, so a change
/// undone between two looks is missed, never invented.
public struct UBootHistory: Codable, Equatable, Sendable {
  public private(set) var lines: [String] = []
  private var counters: [String]?
  private var poweredOnBoot: Int?

  public static let limit = 8
  /// The variables a line shows: the ones otad writes and U-Boot counts down.
  static let counterNames = ["BOOT_ORDER", "BOOT_A_LEFT", "BOOT_B_LEFT"]

  public init() {}

  /// One look at `seconds` (since the board was made): the environment as fw_printenv read it (nil:
  /// not read this time, or unreadable), the board on or off, and U-Boot's last boot before it.
  public mutating func observe(
    at seconds: Double, environment: [String: String]?, poweredOn: UBootPowerOn?, lastBoot: UBootBoot?
  ) {
    let stamp = "+\(format2(seconds)) s"
    if let on = poweredOn, on.boot != poweredOnBoot {
      poweredOnBoot = on.boot
      append("\(stamp): the board powered on (boot \(on.boot)): the bootloader is choosing")
    }
    if poweredOn == nil, let boot = poweredOnBoot, let lastBoot, lastBoot.number >= boot {
      poweredOnBoot = nil
      append("\(stamp): \(lastBoot.sentence)")
    }
    guard let environment else { return }
    let now = Self.counterNames.map { environment[$0] ?? "" }
    guard now != counters else { return }
    counters = now
    var line =
      "\(stamp): "
      + zip(Self.counterNames, now).map { "\($0)=\($1.isEmpty ? "(not set)" : $1)" }
      .joined(separator: " ")
    if poweredOn == nil, let first = now[0].split(separator: " ").first.map(String.init), let lastBoot,
      lastBoot.kernel == "started", first != lastBoot.chose
    {
      line +=
        " (puts \(first) first while the board runs \(lastBoot.chose): they disagree until the next boot)"
    }
    append(line)
  }

  private mutating func append(_ line: String) {
    lines.append(line)
    if lines.count > Self.limit { lines.removeFirst(lines.count - Self.limit) }
  }
}
