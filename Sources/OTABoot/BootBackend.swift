import OTAStorage
import OTASystem
import OTAWire

/// A bootloader's pointer, behind one interface (RAUC's bootchooser is the model). otad's boot state
/// is the authority; a backend makes the bootloader's variables say what the state says, and tells
/// which slot the bootloader started. Every call is idempotent: after a power cut the boot stage
/// simply applies the plan again.
public protocol BootBackend: Sendable {
  /// A short name for logs and `otad status`: "file", "tryboot", "uboot", "grub".
  var name: String { get }

  /// The slot the bootloader started this time, or nil when it cannot tell (the file backend: there
  /// otad's boot stage is the bootloader and decides itself).
  func bootedSlot() throws(BootBackendError) -> SlotID?

  /// What the bootloader's own variables say (its primary slot, an armed trial, the slot it
  /// started): the evidence a lost boot state is rebuilt from. The default knows only `bootedSlot`.
  func pointer() throws(BootBackendError) -> BootPointer

  /// Makes the bootloader's pointer say `plan`, writing only what differs.
  func apply(_ plan: BootPlan) throws(BootBackendError)

  /// The command that restarts into `plan`'s next boot when the plain restart action would not
  /// (Raspberry Pi tryboot: `reboot "0 tryboot"` for a trial), else nil.
  func restartCommand(for plan: BootPlan) -> [String]?
}

extension BootBackend {
  public func pointer() throws(BootBackendError) -> BootPointer { BootPointer(booted: try bootedSlot()) }
}

/// Why a backend could not read or write the bootloader's pointer.
public struct BootBackendError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  /// The system's error when a system call failed (on a bootloader's file, or starting or waiting
  /// for its tool): what tells a full or read-only boot partition from a permission problem; nil
  /// for a failure of another kind (a tool's exit status, what a file says).
  public let errno: Errno?

  public init(_ description: String, errno: Errno? = nil) {
    self.description = description
    self.errno = errno
  }
}
