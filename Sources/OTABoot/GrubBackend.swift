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

  /// Reads the block with `grub-editenv FILE list` and, when anything differs, writes a new block
  /// with every variable it had and the five set: made beside the old one by grub-editenv
  /// (`FILE.tmp`: `create`, then one `set`), then put in its place as the record store does it
  /// (fsync, rename over FILE, fsync the directory). grub-editenv's own `set` truncates FILE and
  /// then writes it, so a power cut between the two left a 0-byte block, which GRUB cannot read
  /// (it boots its defaults, slot A, whatever that holds) nor save to: seen with the real GRUB.
  /// A block grub-editenv calls invalid (zeroed, torn, 0 bytes) is replaced the same way.
  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    let wanted = variables(for: plan)
    let (current, valid) = try listing()
    if valid, VariableListing.differences(between: current, and: wanted).isEmpty { return }
    let staging = environmentFile + ".tmp"
    let kept = current.filter { name, _ in !wanted.contains { $0.name == name } }.sorted { $0.key < $1.key }
      .map { "\($0.key)=\($0.value)" }
    try tools.runText("grub-editenv", [staging, "create"])
    try tools.runText("grub-editenv", [staging, "set"] + kept + wanted.map { "\($0.name)=\($0.value)" })
    guard let block = try BootFileSystem.contents(of: staging) else {
      throw BootBackendError("grub-editenv left no \(staging)")
    }
    try BootFileSystem.replace(environmentFile, with: block)
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
