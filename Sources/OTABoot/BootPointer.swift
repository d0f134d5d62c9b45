import OTAWire

/// What a bootloader's own variables say, read back: evidence for rebuilding a lost boot state
/// (`BootStateRecovery`). Each field is nil when the bootloader cannot tell.
public struct BootPointer: Equatable, Sendable, CustomStringConvertible {
  /// The slot it boots when no trial is armed: U-Boot's and GRUB's last slot in the order,
  /// tryboot's `[all] boot_partition`, the file backend's primary link.
  public var primary: SlotID?
  /// A slot armed for a trial boot, when the bootloader says so (the order names two slots, the
  /// file backend's link points elsewhere than its primary link).
  public var trial: SlotID?
  /// The slot the bootloader started this time (the kernel command line, the device tree).
  public var booted: SlotID?

  public init(primary: SlotID? = nil, trial: SlotID? = nil, booted: SlotID? = nil) {
    self.primary = primary
    self.trial = trial
    self.booted = booted
  }

  /// Knows nothing.
  public static let unknown = BootPointer()

  /// Mirrors a plan: what a backend reads back after applying it.
  public init(plan: BootPlan, booted: SlotID? = nil) {
    self.init(primary: plan.primary, trial: plan.trial?.slot, booted: booted)
  }

  public var description: String {
    var parts: [String] = []
    if let primary { parts.append("primary \(primary)") }
    if let trial { parts.append("trial \(trial)") }
    if let booted { parts.append("booted \(booted)") }
    return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
  }
}
