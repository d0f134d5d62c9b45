import OTABoot
import OTAStorage
import OTAWire
import Synchronization

/// A bootloader for the in-memory device: otad's boot stage decides (it reports no booted slot), and
/// every plan applied is kept so that tests can read what the bootloader was told, in order.
public final class SimulatedBootloader: BootBackend {
  private let plans = Mutex<[BootPlan]>([])

  public init() {}

  public var name: String { "simulated" }

  public func bootedSlot() throws(BootBackendError) -> SlotID? { nil }

  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    plans.withLock { applied in
      if applied.last != plan { applied.append(plan) }
    }
  }

  public func restartCommand(for plan: BootPlan) -> [String]? { nil }

  /// Every distinct plan applied, in order.
  public var appliedPlans: [BootPlan] { plans.withLock { $0 } }
}
