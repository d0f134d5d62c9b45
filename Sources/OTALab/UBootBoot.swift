/// One line of the U-Boot harness's boots.log (Scripts/bootloaders/uboot/boot-once.py writes one per
/// power-on): `boot <n> chose=<A|B|-> kernel=<started|hung|none|stuck|cut-...> seconds=<s>
/// save_ms=<ms|->`. What U-Boot chose, as its console said, and what the chosen kernel did.
public struct UBootBoot: Codable, Equatable, Sendable {
  public var number: Int
  /// "A", "B", or "-" (U-Boot chose no slot).
  public var chose: String
  public var kernel: String
  public var seconds: Double?

  public init(number: Int, chose: String, kernel: String, seconds: Double? = nil) {
    self.number = number
    self.chose = chose
    self.kernel = kernel
    self.seconds = seconds
  }

  /// Nil for a line that is not a boot's (a line cut short, anything else).
  public init?(line: Substring) {
    let words = line.split(separator: " ")
    guard words.count >= 4, words[0] == "boot", let number = Int(words[1]) else { return nil }
    var fields: [Substring: Substring] = [:]
    for word in words.dropFirst(2) {
      guard let equals = word.firstIndex(of: "=") else { continue }
      fields[word[..<equals]] = word[word.index(after: equals)...]
    }
    guard let chose = fields["chose"], let kernel = fields["kernel"], !kernel.isEmpty else { return nil }
    self.init(
      number: number, chose: String(chose), kernel: String(kernel),
      seconds: fields["seconds"].flatMap { Double($0) })
  }

  /// Every boot the log holds, oldest first.
  public static func parse(_ log: String) -> [UBootBoot] {
    log.split(separator: "\n").compactMap(UBootBoot.init(line:))
  }

  /// The boot as the panel says it: "boot 3: U-Boot chose B, its kernel started (2.41 s)".
  public var sentence: String {
    let choice = chose == "-" ? "U-Boot chose no slot" : "U-Boot chose \(chose)"
    let outcome: String
    switch kernel {
    case "started": outcome = "its kernel started"
    case "hung": outcome = "its kernel hung (the watchdog reset the board)"
    case "none": outcome = "no kernel started (reset)"
    case "stuck": outcome = "nothing reported (killed)"
    default:
      outcome =
        kernel.hasPrefix("cut-") ? "power cut during saveenv (\(kernel.dropFirst(4)))" : "kernel \(kernel)"
    }
    return "boot \(number): \(choice), \(outcome)" + (seconds.map { " (\(format2($0)) s)" } ?? "")
  }
}

/// The board powered on now: boot-once.py's `powered-on` file (`boot=<n> pid=<pid> since=<unix
/// time>`), read while that pid still runs.
public struct UBootPowerOn: Codable, Equatable, Sendable {
  public var boot: Int
  public var pid: Int32
  /// Unix time, seconds.
  public var since: Double

  public init(boot: Int, pid: Int32, since: Double) {
    self.boot = boot
    self.pid = pid
    self.since = since
  }

  /// Nil for anything but the file's one line.
  public init?(file text: String) {
    var fields: [Substring: Substring] = [:]
    for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
      guard let equals = word.firstIndex(of: "=") else { return nil }
      fields[word[..<equals]] = word[word.index(after: equals)...]
    }
    guard let boot = fields["boot"].flatMap({ Int($0) }), let pid = fields["pid"].flatMap({ Int32($0) }),
      let since = fields["since"].flatMap({ Double($0) })
    else { return nil }
    self.init(boot: boot, pid: pid, since: since)
  }
}

/// Two decimals, without Foundation.
func format2(_ value: Double) -> String {
  let hundredths = Int((value * 100).rounded())
  return "\(hundredths / 100)." + String(String(hundredths % 100 + 100).dropFirst())
}
