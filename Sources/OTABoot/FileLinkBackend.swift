import OTAStorage
import OTAWire

/// The backend for a device where otad is its own bootloader: a symbolic link names the slot to run
/// (a launcher or service unit starts whatever `link` points at). otad's boot stage decides trials
/// and rollbacks itself, so this backend only moves the link to the plan's next slot.
public struct FileLinkBackend: BootBackend {
  /// The symbolic link, e.g. /var/lib/otad/current.
  public let link: String
  /// What the link points at for slot A and for slot B.
  public let slotPaths: [String]

  public var name: String { "file" }

  public init(link: String, slotPaths: [String]) {
    self.link = link
    self.slotPaths = slotPaths
  }

  /// Always nil: nothing but otad's own boot state knows which slot started.
  public func bootedSlot() throws(BootBackendError) -> SlotID? { nil }

  /// Points `link` at the plan's next slot, atomically, unless it already points there.
  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    let wanted = try path(of: plan.next)
    if try BootFileSystem.symbolicLinkTarget(link) == wanted { return }
    try BootFileSystem.replaceSymbolicLink(link, pointingAt: wanted)
  }

  public func restartCommand(for plan: BootPlan) -> [String]? { nil }

  /// The slot the link points at now; nil when it is missing, unreadable or points elsewhere.
  public func target() -> SlotID? {
    guard let current = try? BootFileSystem.symbolicLinkTarget(link) else { return nil }
    return SlotID.allCases.first {
      slotPaths.indices.contains(Int($0.rawValue)) && slotPaths[Int($0.rawValue)] == current
    }
  }

  private func path(of slot: SlotID) throws(BootBackendError) -> String {
    guard slotPaths.count == 2 else {
      throw BootBackendError("the file backend needs two slot paths (A and B), not \(slotPaths.count)")
    }
    return slotPaths[Int(slot.rawValue)]
  }
}
