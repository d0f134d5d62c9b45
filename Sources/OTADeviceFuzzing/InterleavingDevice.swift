import OTABoot
import OTAEngine
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTASMPServer
import OTASimulation
import OTAStorage
import OTAStorageTesting
import OTATrust
import OTAWire

/// One device as otad wires it, in memory: the receiver host with its update transaction, the SMP
/// server, Nordic's Legacy and Secure DFU sessions behind their central gates, all on one host;
/// its boot stage, restarts and power cuts. The fuzzer's steps drive it; `InterleavingInvariants`
/// checks it after each.
struct InterleavingDevice {
  let medium: MemoryMedium
  let bootloader = SimulatedBootloader()
  var host: ReceiverHost
  var smp = SMPDevice()
  var legacy = LegacyDFUDevice()
  var secure: SecureDFUDevice?
  var gates: [NordicDFUService: NordicDFUCentralGate] = [:]
  var now: Duration = .zero
  /// The running slot's bytes as this boot found them: no step may change them.
  var runningBytes: [UInt8] = []
  /// Boots so far (restarts, power cuts).
  var boots = 0

  var control: BootControl {
    BootControl(
      records: medium, backend: bootloader, factoryVersion: InterleavingFixtures.factoryVersion, attempts: 2,
      slots: SlotAccess(medium: medium), policy: InterleavingFixtures.policy)
  }

  /// A new device: slot A holds the factory image, nothing else exists.
  init() throws(StorageError) {
    medium = MemoryMedium(slotCapacity: InterleavingFixtures.slotCapacity)
    medium.fill(.a, with: InterleavingFixtures.factoryImage)
    host = try Self.boot(medium, bootloader, InterleavingFixtures.factoryVersion).host
    adoptBoot()
  }

  /// The boot stage, then a new host around the slot it chose (what otad does at each start).
  static func boot(_ medium: MemoryMedium, _ bootloader: SimulatedBootloader, _ factory: Version)
    throws(StorageError) -> (host: ReceiverHost, decision: BootDecision)
  {
    let control = BootControl(
      records: medium, backend: bootloader, factoryVersion: factory, attempts: 2,
      slots: SlotAccess(medium: medium), policy: InterleavingFixtures.policy)
    let decision: BootDecision
    do {
      decision = try control.runBootStage()
    } catch {
      if case .storage(let storage) = error { throw storage }
      throw .bootloader("\(error)")
    }
    let host = try ReceiverHost(
      storage: DeviceStorage(slots: SlotAccess(medium: medium), records: medium), control: control,
      running: decision.run, windowCapacity: InterleavingFixtures.windowCapacity,
      imageCheck: .standard(InterleavingFixtures.policy),
      features: .all)
    return (host, decision)
  }

  /// A restart (asked for, or after a power cut: `lostWrites` decides which unsynced writes were
  /// lost): every protocol's memory is gone, the boot stage runs again, the journal is taken up.
  /// Returns the boot stage's decision.
  mutating func restart(powerCut seed: UInt64? = nil, verdict: UInt8) throws(StorageError) -> BootDecision {
    if let seed { medium.reboot(seed: seed) }
    var attempts = 0
    while true {
      attempts += 1
      let (booted, decision) = try Self.boot(medium, bootloader, InterleavingFixtures.factoryVersion)
      host = booted
      boots += 1
      adoptBoot()
      // A trial's verdict, as its health check would give it: pass, fail (and restart), or none yet.
      guard host.runningOnTrial, attempts < 8 else { return decision }
      switch verdict % 3 {
      case 0:
        try host.markGood()
        return decision
      case 1:
        try host.failTrialBoot(.healthCheckFailed)
      default:
        return decision
      }
    }
  }

  /// What a new process starts with: fresh protocol sessions, the Secure DFU session resumed from
  /// its record, the running slot's bytes noted.
  private mutating func adoptBoot() {
    smp = SMPDevice()
    legacy = LegacyDFUDevice()
    gates = [:]
    secure = InterleavingFixtures.secureTrust.map { SecureDFUDevice(trust: $0) }
    if var session = secure {
      _ = try? session.resume(host: &host)
      secure = session
    }
    host.advance(to: now)
    runningBytes = medium.slotBytes(host.running)
  }

  /// Time passes (the leases and budgets run on it).
  mutating func wait(_ duration: Duration) {
    now += duration
    host.advance(to: now)
  }
}
