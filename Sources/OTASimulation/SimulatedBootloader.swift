import OTABoot
import OTAStorage
import OTAWire
import Synchronization

/// A bootloader for the in-memory device: otad's boot stage decides (it reports no booted slot), and
/// every plan applied is kept so that tests can read what the bootloader was told, in order.
public final class SimulatedBootloader: BootBackend {
  private let plans = Mutex<[BootPlan]>([])
  /// False: like an install of the file backend older than its primary link, the pointer tells
  /// only the slot that starts next.
  public let reportsPrimary: Bool

  public init(reportsPrimary: Bool = true) { self.reportsPrimary = reportsPrimary }

  public var name: String { "simulated" }

  public func bootedSlot() throws(BootBackendError) -> SlotID? { nil }

  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    plans.withLock { applied in
      if applied.last != plan { applied.append(plan) }
    }
  }

  /// The last plan applied, read back as a real bootloader's variables would be.
  public func pointer() throws(BootBackendError) -> BootPointer {
    let reportsPrimary = reportsPrimary
    return plans.withLock { plans in
      guard let plan = plans.last else { return .unknown }
      return reportsPrimary ? BootPointer(plan: plan) : BootPointer(booted: plan.next)
    }
  }

  public func restartCommand(for plan: BootPlan) -> [String]? { nil }

  /// Every distinct plan applied, in order.
  public var appliedPlans: [BootPlan] { plans.withLock { $0 } }
}
