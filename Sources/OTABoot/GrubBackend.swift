import OTAStorage
import OTAWire

/// GRUB with RAUC's variables in its environment block: `ORDER` lists the slots to try ("B A"),
/// `X_OK` says slot X may boot at all, `X_TRY` says grub.cfg has already tried it since otad last
/// looked. grub.cfg boots the first slot in ORDER that is OK and not tried, setting its TRY first, so
/// one apply gives a slot one GRUB attempt; otad applies again on each boot while attempts are left.
public struct GrubBackend: BootBackend {
  public let tools: ToolRunner
  /// GRUB's environment block, read and written with `grub-editenv`.
  public let environmentFile: String
  /// The kernel command line, read for `rauc.slot=`.
  public let cmdline: String

  public var name: String { "grub" }

  public init(
    tools: ToolRunner, environmentFile: String = "/boot/grub/grubenv", cmdline: String = "/proc/cmdline"
  ) {
    self.tools = tools
    self.environmentFile = environmentFile
    self.cmdline = cmdline
  }

  public func bootedSlot() throws(BootBackendError) -> SlotID? {
    try KernelCommandLine.bootedSlot(path: cmdline, hint: "on each menuentry's linux line in grub.cfg,")
  }

  /// Reads the block with `grub-editenv FILE list` and, when anything differs, sets all five variables
  /// in one `grub-editenv FILE set` call, one rewrite of the 1 KiB block. A block grub-editenv calls
  /// invalid (zeroed, torn, or cut to 0 bytes by a power cut between `set`'s truncation and its
  /// write) is first replaced with a blank one (`grub-editenv FILE create`, which writes a new file
  /// and renames it over): left as it is, GRUB could not save to it and would boot its defaults.
  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    let wanted = variables(for: plan)
    let (current, valid) = try listing()
    if valid, VariableListing.differences(between: current, and: wanted).isEmpty { return }
    if !valid { try tools.runText("grub-editenv", [environmentFile, "create"]) }
    try tools.runText("grub-editenv", [environmentFile, "set"] + wanted.map { "\($0.name)=\($0.value)" })
  }

  /// The block's variables, and whether the block is valid: one that grub-editenv refuses as invalid
  /// or too small holds no variables (and so no pointer) rather than stopping the boot stage. A
  /// missing block is made by grub-editenv itself.
  private func listing() throws(BootBackendError) -> (variables: [String: String], valid: Bool) {
    do {
      return (VariableListing.parse(try tools.runText("grub-editenv", [environmentFile, "list"])), true)
    } catch {
      let text = error.description
      guard text.contains("invalid environment block") || text.contains("environment block too small") else {
        throw error
      }
      return ([:], false)
    }
  }

  public func restartCommand(for plan: BootPlan) -> [String]? { nil }

  /// The order variable read back (its last slot is the primary, a first one before it a trial)
  /// and the slot the kernel command line names.
  public func pointer() throws(BootBackendError) -> BootPointer {
    return BootPointer.fromOrder(try listing().variables["ORDER"], booted: try bootedSlot())
  }

  /// The variables for `plan`, in the order they are written. A trial T over P: order "T P", both OK
  /// and untried. No trial: order "P" alone, P OK and untried, the other slot not OK.
  public func variables(for plan: BootPlan) -> [(name: String, value: String)] {
    let primary = plan.primary
    var ok: [SlotID: Int] = [primary: 1, primary.other: 0]
    var order = "\(primary)"
    if let trial = plan.trial, trial.slot != primary {
      ok[trial.slot] = 1
      order = "\(trial.slot) \(primary)"
    }
    return [
      ("ORDER", order), ("A_OK", "\(ok[.a, default: 0])"), ("B_OK", "\(ok[.b, default: 0])"), ("A_TRY", "0"),
      ("B_TRY", "0"),
    ]
  }
}
