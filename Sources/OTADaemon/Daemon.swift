import Logging
import OTABoot
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTASMPServer
import OTAStorage
import OTASystem
import OTATrust
import OTAWire

/// The daemon put together from its layout and configuration: the storage, the one path that changes
/// the boot state, and the image policy. `otad run` serves with it (`serve`), `otad status` reports
/// from it (`statusReport`), `otad boot`, `mark-good` and `mark-bad` use its `control`.
public struct Daemon: Sendable {
  public let layout: DeviceLayout
  public let configuration: DaemonConfiguration
  public let storage: DeviceStorage
  public let control: BootControl
  public let policy: ImagePolicy

  public init(layout: DeviceLayout, configuration: DaemonConfiguration, policy: ImagePolicy)
    throws(StorageError)
  {
    self.layout = layout
    self.configuration = configuration
    self.policy = policy
    storage = try layout.openStorage()
    control = configuration.makeBootControl(layout: layout, storage: storage, policy: policy)
  }

  /// What the executable provides: the link (the library links neither BlueZ nor the simulated
  /// link), and what touches the process itself (the pid file, the restart).
  public struct Environment {
    /// Opens the link the settings chose.
    public var openLink: (_ link: DeviceLink, _ logger: Logger) throws -> OpenLink
    /// The daemon runs: make it findable (the pid file).
    public var announce: () -> Void
    /// The daemon stops or restarts: it is no longer findable.
    public var withdraw: () -> Void
    /// Restarts into `plan` (the configured restart action); returns only by throwing.
    public var restart: (_ plan: BootPlan) throws -> Never
    /// Told what the daemon does as it does it: boot decisions, requests, answers, restarts.
    public var observe: (DeviceActivity) -> Void
    /// `observe` is told each data write and SMP request too (the session report wants them).
    public var observesDataWrites = false

    public init(
      openLink: @escaping (_ link: DeviceLink, _ logger: Logger) throws -> OpenLink,
      announce: @escaping () -> Void, withdraw: @escaping () -> Void,
      restart: @escaping (_ plan: BootPlan) throws -> Never,
      observe: @escaping (DeviceActivity) -> Void = { _ in }
    ) {
      self.observe = observe
      self.openLink = openLink
      self.announce = announce
      self.withdraw = withdraw
      self.restart = restart
    }
  }

  /// A link the daemon serves on, and what closes it when the daemon stops.
  public struct OpenLink {
    public var link: any PeripheralLink
    public var close: () -> Void

    public init(link: any PeripheralLink, close: @escaping () -> Void) {
      self.link = link
      self.close = close
    }
  }

  /// Runs the boot stage (when the daemon is the boot stage), then serves on `link` until a stop
  /// signal (returns) or an ACTIVATE (restarts through the environment).
  public func serve(link choice: DeviceLink, environment: Environment, logger: Logger) throws {
    try (storage.records as? FileRecordStore)?.checkWritable()
    var running: SlotID?
    var runningImage: InstalledImageCheck?
    if configuration.boot.stage == .daemon {
      let stage = try BootStageReport.run(control, logger: logger)
      let decision = stage.decision
      let outcome = decision.state.outcome
      environment.observe(
        .bootDecision(
          row: decision.row.rawValue, run: "\(decision.run)",
          version: "\(decision.state[decision.run].version)",
          restart: decision.restart,
          rolledBack: decision.brokenSeal != nil
            || [.trialExhausted, .trialExhaustedStillRunning, .bootloaderFellBack].contains(decision.row)
            ? "firmware \(outcome.to) \(outcome.reason)" : nil))
      if stage.decision.restart {
        environment.observe(.restart(reason: "the boot stage: \(decision.row.rawValue)"))
        try environment.restart(stage.decision.state.plan)
      }
      running = stage.decision.run
      runningImage = stage.image
    }
    var host = try ReceiverHost(
      storage: storage, control: control, running: running, windowCapacity: configuration.windowCapacity,
      windowGrace: configuration.windowGrace, imageCheck: .standard(policy),
      pairingRequired: configuration.requirePairing)
    host.activationPolicy = configuration.activationPolicy
    host.surroundings = UpdateLockDirectory(path: configuration.lockDirectory, logger: logger)
    // What `otad status` weighs a kept activation against, whatever flags it is given.
    let policyRecord = ActivationRecords.encode(
      configuration.activationPolicy, lockDirectory: configuration.lockDirectory)
    do {
      if try storage.records.load(ActivationRecords.policyName) != policyRecord {
        try storage.records.replace(ActivationRecords.policyName, with: policyRecord)
      }
    } catch {
      // Only `otad status`'s view of the policy is lost (it falls back on its own flags).
      logger.warning("could not record the activation policy for otad status: \(error)")
    }
    logStart(host, logger: logger)
    environment.observe(
      .serving(
        slot: "\(host.running)", version: "\(host.info().runningVersion)", onTrial: host.runningOnTrial,
        committed: host.info().transfer.committedOffset))
    environment.announce()
    defer { environment.withdraw() }
    let stopSignals = try StopSignals()
    let opened = try environment.openLink(choice, logger)
    let healthEnvironment = HealthEnvironment.make(
      boot: host.boot, slot: host.running, slotPath: layout.slots[host.running],
      reader: try? storage.slots.reader(host.running),
      // Only a trial (or a provisional state's running slot) runs the health check; the boot stage
      // has checked the image already, if it ran.
      imageCheck: host.runningOnTrial || host.boot.provisional
        ? runningImage ?? (try? control.checkInstalledImage(host.running, in: host.boot)) : nil)
    let smpUDP = try openSMPOverUDP(logger: logger)
    let smpOn = smpUDP != nil || (configuration.smpBluetooth && choice.isBluetooth)
    let identity = configuration.identity(logger: logger)
    logger.notice(
      "serving as serial \(identity.serial ?? "unknown"), model \(identity.model ?? "default"), hardware revision \(identity.hardwareRevision ?? "default")"
    )
    let service = DeviceService(
      host: host, link: opened.link, logger: logger, trial: configuration.boot.trial,
      healthEnvironment: healthEnvironment,
      smp: smpOn ? SMPService(device: SMPDevice(system: SMPDevice.systemInfo())) : nil, smpUDP: smpUDP,
      identity: identity)
    service.observe = environment.observe
    service.recordsDataWrites = environment.observesDataWrites
    service.activationNotify = configuration.activationNotify
    if configuration.legacyDFU || configuration.secureDFU, !choice.isBluetooth {
      logger.warning("Nordic's DFU is served over Bluetooth only: not on this link (docs/NORDIC-DFU.md)")
    }
    if configuration.legacyDFU, choice.isBluetooth {
      service.nordicDFU[.legacy] = LegacyDFUDevice(
        identity: .init(
          deviceType: configuration.nordicDeviceType, deviceRevision: configuration.nordicDeviceRevision))
      logger.notice("serving Nordic's Legacy DFU beside the OTA service (docs/NORDIC-DFU.md)")
    }
    if choice.isBluetooth,
      let trust = try configuration.secureDFUTrust(readFile: { path in
        (try? FileSystem.readFile(path)).flatMap { String(validating: $0, as: UTF8.self) }
      })
    {
      var secure = SecureDFUDevice(trust: trust)
      if let note = try secure.resume(host: &service.host) { logger.notice("\(note)") }
      service.nordicDFU[.secure] = secure
      logger.notice(
        "serving Nordic's Secure DFU beside the OTA service (docs/NORDIC-DFU.md), init packets signed by \(configuration.secureDFUKeyFile ?? "")"
      )
    }
    if configuration.faultsAllowed {
      service.allowFaults(stateDirectory: layout.stateDirectory, configured: configuration.faults)
    } else if (try? FileSystem.kind(ofPath: FaultStore(stateDirectory: layout.stateDirectory).path)) != nil {
      logger.warning("a faults file is in the state directory, but faults are not allowed: it is ignored")
    }
    defer { service.closeFaultControl() }
    let stop = try service.run(stopSignals: stopSignals)
    host = service.host
    opened.close()
    switch stop {
    case .signal(let number):
      logger.notice("stopping on signal \(number)")
      environment.observe(.stopped(signal: number))
    case .restart:
      environment.withdraw()
      try environment.restart(host.boot.plan)
    }
  }

  /// SMP over UDP when the configuration asks for it (off by default: it has no pairing).
  private func openSMPOverUDP(logger: Logger) throws -> SMPEndpoint? {
    guard let address = configuration.smpUDP else { return nil }
    let socket = try UDPSocket(binding: address)
    logger.warning(
      "serving SMP (MCUmgr) over UDP on \(socket.boundAddress ?? address): no pairing, no authentication")
    return SMPEndpoint(socket: socket)
  }

  /// What runs, on what terms: the running slot, the transfer, the trust policy, and a bootloader
  /// that started a slot the state does not confirm.
  private func logStart(_ host: ReceiverHost, logger: Logger) {
    for notice in host.startNotices { logger.error("\(notice)") }
    let info = host.info()
    logger.notice(
      "running slot \(info.runningSlot), version \(info.runningVersion)\(host.runningOnTrial ? " (on trial)" : "")",
      metadata: [
        "transfer": "\(info.transfer.state)", "committed": "\(info.transfer.committedOffset)",
        "capacity": "\(info.slotCapacity)", "bootloader": "\(control.backend.name)",
      ])
    let policy = host.imageCheck.policy
    logger.notice(
      policy.requiresSignature
        ? "images must be signed by: \(policy.trustedKeys.map(\.description).joined(separator: ", "))"
        : "images need no signature (no [trust] keys): their CRC32 and MCUboot hash are still checked",
      metadata: [
        "downgrades": "\(policy.allowDowngrade ? "allowed" : "refused")",
        "security-floor": "\(host.boot.securityFloor)",
      ])
    if host.running != host.boot.confirmed, host.boot.trial?.slot != host.running {
      logger.warning("the bootloader started slot \(host.running), which the boot state does not confirm")
    }
  }
}
