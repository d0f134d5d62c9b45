import OTAStorage
import OTAWire

/// The backend for a device where otad is its own bootloader: a symbolic link names the slot to run
/// (a launcher or service unit starts whatever `link` points at). otad's boot stage decides trials
/// and rollbacks itself, so this backend moves the link to the plan's next slot. A second link,
/// `LINK.primary`, names the plan's primary slot (as U-Boot's order names its last slot): when the
/// boot state is lost, it tells which slot was confirmed even while a trial runs.
public struct FileLinkBackend: BootBackend {
  /// The symbolic link, e.g. /var/lib/otad/current.
  public let link: String
  /// What the link points at for slot A and for slot B.
  public let slotPaths: SlotPair<String>

  public var name: String { "file" }

  public init(link: String, slotPaths: SlotPair<String>) {
    self.link = link
    self.slotPaths = slotPaths
  }

  /// Always nil: nothing but otad's own boot state knows which slot started.
  public func bootedSlot() throws(BootBackendError) -> SlotID? { nil }

  /// The link that names the confirmed slot.
  public var primaryLink: String { link + ".primary" }

  /// The primary link, then the link itself, each moved atomically and only when it differs.
  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    for (path, slot) in [(primaryLink, plan.primary), (link, plan.next)] {
      let wanted = self.path(of: slot)
      if try BootFileSystem.symbolicLinkTarget(path) == wanted { continue }
      try BootFileSystem.replaceSymbolicLink(path, pointingAt: wanted)
    }
  }

  /// The primary link's slot, and the link's as a trial when it differs; with no primary link
  /// (an install older than it), the link's slot as the one started.
  public func pointer() throws(BootBackendError) -> BootPointer {
    let next = target()
    guard let primary = slot(at: primaryLink) else { return BootPointer(booted: next) }
    return BootPointer(primary: primary, trial: next == primary ? nil : next)
  }

  public func restartCommand(for plan: BootPlan) -> [String]? { nil }

  /// The slot the link points at now; nil when it is missing, unreadable or points elsewhere.
  public func target() -> SlotID? { slot(at: link) }

  private func slot(at link: String) -> SlotID? {
    guard let current = try? BootFileSystem.symbolicLinkTarget(link) else { return nil }
    return slotPaths.firstSlot { $0 == current }
  }

  private func path(of slot: SlotID) -> String { slotPaths[slot] }
}
