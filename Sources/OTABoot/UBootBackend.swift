import OTAStorage
import OTAWire

/// U-Boot with RAUC's variables: `BOOT_ORDER` lists the slots to try ("B A"), `BOOT_A_LEFT` and
/// `BOOT_B_LEFT` count the boots each may still take. The boot script walks the order, takes the first
/// slot with boots left, decrements its count, saves the environment and adds `rauc.slot=X` to the
/// kernel command line (docs/BOOT-BACKENDS.md has the script).
public struct UBootBackend: BootBackend {
  public let tools: ToolRunner
  /// The kernel command line, read for `rauc.slot=`.
  public let cmdline: String
  /// The fw_env.config that locates the environment, passed to both tools with `-c`; nil: the tools'
  /// own default, /etc/fw_env.config.
  public let config: String?
  /// The boots the primary gets each time the plan is applied.
  public let primaryAttempts: Int

  public var name: String { "uboot" }

  public init(
    tools: ToolRunner, cmdline: String = "/proc/cmdline", config: String? = nil, primaryAttempts: Int = 3
  ) {
    self.tools = tools
    self.cmdline = cmdline
    self.config = config
    self.primaryAttempts = primaryAttempts
  }

  public func bootedSlot() throws(BootBackendError) -> SlotID? {
    try KernelCommandLine.bootedSlot(path: cmdline, hint: "in the U-Boot script's bootargs,")
  }

  /// Reads the environment with `fw_printenv` and, when any of the three variables differs, writes all
  /// three in one `fw_setenv --script -` call (one environment write, so a power cut leaves the old
  /// or the new set, never a mixture). The script's lines are `NAME=value`: libubootenv's fw_setenv
  /// (Debian's libubootenv-tool) skips a `NAME value` line, the older format, without a word.
  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    let wanted = variables(for: plan)
    let current = VariableListing.parse(try printenv())
    if VariableListing.differences(between: current, and: wanted).isEmpty { return }
    let script = wanted.map { "\($0.name)=\($0.value)\n" }.joined()
    try tools.runText("fw_setenv", configArguments + ["--script", "-"], input: script)
  }

  private var configArguments: [String] { config.map { ["-c", $0] } ?? [] }

  private func printenv() throws(BootBackendError) -> String {
    try tools.runText("fw_printenv", configArguments)
  }

  public func restartCommand(for plan: BootPlan) -> [String]? { nil }

  /// The order variable read back (its last slot is the primary, a first one before it a trial)
  /// and the slot the kernel command line names.
  public func pointer() throws(BootBackendError) -> BootPointer {
    try pointer(variables: VariableListing.parse(try printenv()))
  }

  /// The same from variables already read (`fw_printenv`'s, parsed): only the kernel command line
  /// is read.
  public func pointer(variables: [String: String]) throws(BootBackendError) -> BootPointer {
    BootPointer.fromOrder(variables["BOOT_ORDER"], booted: try bootedSlot())
  }

  /// The variables for `plan`, in the order they are written. A trial T over P: order "T P", T's
  /// attempts left, P's `primaryAttempts`. No trial: order "P" alone, the other slot at 0.
  public func variables(for plan: BootPlan) -> [(name: String, value: String)] {
    let primary = plan.primary
    var left: [SlotID: Int] = [primary: primaryAttempts, primary.other: 0]
    var order = "\(primary)"
    if let trial = plan.trial, trial.slot != primary {
      left[trial.slot] = trial.attemptsLeft
      order = "\(trial.slot) \(primary)"
    }
    return [
      ("BOOT_ORDER", order), ("BOOT_A_LEFT", "\(left[.a, default: 0])"),
      ("BOOT_B_LEFT", "\(left[.b, default: 0])"),
    ]
  }
}
