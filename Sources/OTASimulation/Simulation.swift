import OTADeltaPlan
import OTAEngine
import OTALink
import OTAReceiverHost
import OTASender
import OTASocketLink
import OTAStorage
import OTASystem
import OTAWire

/// Runs a real `SenderEngine` against a real `ReceiverHost` over an in-memory link, in virtual time.
/// Deterministic for a given seed. The device's storage belongs to the caller: `makeHost` builds a host
/// over it at the start and after every restart, and is told whether that restart was a power cut.
public struct Simulation {
  public struct Result: Sendable {
    public var outcome: SenderOutcome?
    public var elapsed: Duration
    public var connectionEvents = 0
    public var disconnects = 0
    public var restarts = 0
    public var powerCuts = 0
    /// Starts that failed with a storage error, each followed by another start.
    public var failedStarts = 0
    public var packetsLost = 0
    public var packetsDuplicated = 0
    public var packetsReordered = 0
    public var bitsFlipped = 0
    /// Receiver statistics summed over every host instance.
    public var receiver = ReceiverStatistics()
    /// What happened, in order, in virtual time: phases, drops, restarts, resumes.
    public var timeline: [(at: Duration, what: String)] = []
    /// Time spent inside the device host, wall clock and this thread's CPU, for benchmarks.
    /// Zero unless `timesDevice`: the two clock reads per event are the benchmark's own cost.
    public var deviceTime: Duration = .zero
    public var deviceCPUTime: Duration = .zero
    /// Every event the device hosts were given, in order, when `recordsDeviceEvents`: a benchmark
    /// replays them into a fresh host to measure the device alone.
    public var deviceEvents: [ReceiverEvent] = []
  }

  /// Whether each device event is timed (wall clock and thread CPU) into `deviceTime`.
  public var timesDevice = true
  /// Whether `Result.deviceEvents` keeps every device event.
  public var recordsDeviceEvents = false

  enum Packet {
    case data([UInt8])
    case control([UInt8])
    var isControl: Bool { if case .control = self { true } else { false } }
  }

  public typealias HostFactory = (_ afterPowerCut: Bool) throws -> ReceiverHost

  let conditions: LinkConditions
  let faults: DeviceFaults
  var random: SeededGenerator
  var sender: SenderEngine
  let makeHost: HostFactory
  var host: ReceiverHost?
  var now: Duration = .zero
  var connected = false
  var deviceDownUntil: Duration = .zero
  var pendingConnectAt: Duration?
  var pendingInfoRead = false
  var pendingBlockHashesRead = false
  var uplink: [Packet] = []
  var downlink: [[UInt8]] = []
  var senderTimer: Duration?
  var deviceTimer: Duration?
  var result = Result(elapsed: .zero)
  var lastRestartWasPowerCut = false
  var consecutiveFailedStarts = 0
  var dataBytesCarried = 0
  var forcedDisconnectDone = false
  var lastPhase: SenderPhase = .idle
  let clock = ContinuousClock()

  public init(
    image: [UInt8], sender configuration: SenderConfiguration, conditions: LinkConditions,
    faults: DeviceFaults = DeviceFaults(), seed: UInt64, bases: [BaseImage] = [],
    blockDigest: BlockDigester? = nil, makeHost: @escaping HostFactory
  ) throws {
    self.conditions = conditions
    self.faults = faults
    self.random = SeededGenerator(seed: seed)
    self.sender = SenderEngine(
      image: image, configuration: configuration, bases: bases, blockDigest: blockDigest)
    self.makeHost = makeHost
    try boot(afterPowerCut: false)
  }

  /// Starts the device; a power cut while it starts is a crash like any other. A storage error
  /// while it starts (the boot stage's write of the boot state, the confirmation after the health
  /// check) is what makes otad exit with a failure, and its service manager start it again
  /// (`Restart=on-failure`): the same here, up to `maxConsecutiveFailedStarts` in a row.
  private mutating func boot(afterPowerCut: Bool) throws {
    do {
      host = try makeHost(afterPowerCut)
      consecutiveFailedStarts = 0
    } catch StorageError.powerCut {
      host = nil
      result.powerCuts += 1
      lastRestartWasPowerCut = true
      deviceDownUntil = now + faults.restartTime
    } catch let error as StorageError {
      consecutiveFailedStarts += 1
      guard consecutiveFailedStarts <= Self.maxConsecutiveFailedStarts else { throw error }
      host = nil
      result.failedStarts += 1
      note("the device fails to start (\(error)) and is started again")
      lastRestartWasPowerCut = false
      deviceDownUntil = now + faults.restartTime
    }
  }

  /// Failed starts in a row after which the simulation gives up and throws the last one's error.
  public static let maxConsecutiveFailedStarts = 5

  /// The device host as it stands (after the run: the one that survived every restart).
  public var device: ReceiverHost? { host }

  public mutating func run(limit: Duration = .seconds(3600)) throws -> Result {
    apply(sender.handle(.start(now: now)))
    while result.outcome == nil, now < limit {
      try step()
    }
    result.elapsed = now
    return result
  }

  /// One connection interval: maybe connect or drop, move packets both ways, fire timers, give credit.
  mutating func step() throws {
    now += conditions.connectionInterval
    if host == nil, now >= deviceDownUntil { try boot(afterPowerCut: lastRestartWasPowerCut) }
    if let at = pendingConnectAt, now >= at {
      pendingConnectAt = nil
      if now >= deviceDownUntil, host != nil {
        connected = true
        let mtu = ATTMTU(clamping: conditions.mtu)
        try deviceEvent(.connected(mtu: mtu))
        apply(sender.handle(.connected(mtu: mtu, now: now)))
      } else {
        apply(sender.handle(.connectFailed(reason: "device not advertising", now: now)))
      }
    }
    if connected {
      result.connectionEvents += 1
      if random.chance(conditions.disconnects) {
        let restart = random.chance(faults.restartsOnDisconnect)
        try dropLink(
          restartDevice: restart, powerCut: restart && random.chance(faults.powerCutsOnRestart))
      } else {
        try exchange()
      }
    }
    if let due = deviceTimer, now >= due, host != nil {
      deviceTimer = nil
      try deviceEvent(.tick(now: now))
    }
    if let due = senderTimer, now >= due {
      senderTimer = nil
      apply(sender.handle(.tick(now: now)))
    }
    if connected { giveCredit() }
  }

  /// Moves one connection event's worth of packets up, and the notifications queued so far down.
  private mutating func exchange() throws {
    var moved = 0
    while moved < conditions.packetsPerEvent, !uplink.isEmpty, connected {
      var index = 0
      if uplink.count > 1, random.chance(conditions.reordering) {
        index = Int.random(in: 1..<min(uplink.count, 8), using: &random)
        // Control-point writes are ATT requests, each sent after the previous one's response: a
        // command may overtake data (and data a command) but never another command.
        if case .control = uplink[index], uplink[0..<index].contains(where: \.isControl) { index = 0 }
        if index > 0 { result.packetsReordered += 1 }
      }
      let packet = uplink.remove(at: index)
      moved += 1
      switch packet {
      case .data(let bytes):
        dataBytesCarried += bytes.count
        try deviceEvent(.data(bytes, now: now))
        if let limit = conditions.disconnectAfterBytes, !forcedDisconnectDone, dataBytesCarried >= limit {
          forcedDisconnectDone = true
          note("the link drops (forced, after \(dataBytesCarried) bytes)")
          try dropLink(restartDevice: false)
        }
      case .control(let bytes): try deviceEvent(.control(bytes, now: now))
      }
    }
    guard connected else { return }
    if pendingInfoRead, let host {
      pendingInfoRead = false
      apply(sender.handle(.info(try readInfoLikeATT(host), now: now)))
    }
    if pendingBlockHashesRead, var device = host {
      // Computed (or taken from the cache) by the device as a read through the link would.
      pendingBlockHashesRead = false
      let value = device.blockHashes().encoded
      host = device
      apply(sender.handle(.blockHashes(value, now: now)))
    }
    let notifications = downlink
    downlink.removeAll()
    for bytes in notifications where connected {
      apply(sender.handle(.notification(bytes, now: now)))
    }
  }

  /// Reads Info the way a central does over ATT: in pieces of MTU − 1 bytes at growing offsets.
  private func readInfoLikeATT(_ host: ReceiverHost) throws -> [UInt8] {
    let value = host.info().encoded
    var assembler = LongReadAssembler(mtu: conditions.mtu)
    while !assembler.isComplete {
      try assembler.add(
        try LongRead.piece(of: value, at: assembler.nextOffset, mtu: conditions.mtu), at: assembler.nextOffset
      )
    }
    return assembler.value
  }

  private mutating func giveCredit() {
    let queuedData = uplink.reduce(0) { count, packet in
      if case .data = packet { return count + 1 }
      return count
    }
    apply(sender.handle(.writable(count: max(0, conditions.queueDepth - queuedData), now: now)))
  }

  private mutating func deviceEvent(_ event: ReceiverEvent) throws {
    // Taken out while it runs, not copied: a copy left behind would make its buffers copy on write.
    guard var current = host.take() else { return }
    if recordsDeviceEvents { result.deviceEvents.append(event) }
    let started = timesDevice ? clock.now : nil
    let startedCPU = timesDevice ? threadCPUTime() : .zero
    let outputs: [ReceiverHost.Output]
    do {
      outputs = try current.handle(event)
    } catch .powerCut {
      try dropLink(restartDevice: true, powerCut: true)
      return
    }
    host = consume current
    if let started {
      result.deviceTime += clock.now - started
      result.deviceCPUTime += threadCPUTime() - startedCPU
    }
    for output in outputs {
      switch output {
      case .notify(let bytes): if connected { downlink.append(bytes) }
      case .armTimer(let due): deviceTimer = due
      case .restart: try dropLink(restartDevice: true)
      }
    }
  }

  private mutating func dropLink(restartDevice: Bool, powerCut: Bool = false) throws {
    let wasConnected = connected
    connected = false
    uplink.removeAll()
    downlink.removeAll()
    pendingInfoRead = false
    pendingBlockHashesRead = false
    if wasConnected {
      result.disconnects += 1
      if restartDevice { note(powerCut ? "the device loses power" : "the device restarts") }
      if host != nil { try deviceEvent(.disconnected) }
    }
    if restartDevice {
      if let host { result.receiver += host.engine.statistics }
      host = nil
      deviceTimer = nil
      result.restarts += 1
      lastRestartWasPowerCut = powerCut
      if powerCut { result.powerCuts += 1 }
      deviceDownUntil = now + faults.restartTime
    }
    if wasConnected { apply(sender.handle(.disconnected(now: now))) }
  }

  mutating func note(_ what: String) { result.timeline.append((now, what)) }

  /// Carries out what the sender asked for.
  private mutating func apply(_ actions: [SenderAction]) {
    defer {
      if sender.phase != lastPhase {
        lastPhase = sender.phase
        note("central: \(sender.phase.rawValue)")
      }
    }
    for action in actions {
      switch action {
      case .connect(let delay):
        pendingConnectAt = now + delay
      case .disconnect:
        // The central gives up on the link; the device notices the drop as well.
        try? dropLink(restartDevice: false)
      case .readInfo:
        pendingInfoRead = true
      case .readBlockHashes:
        pendingBlockHashesRead = true
      case .writeControl(let bytes):
        if connected { uplink.append(.control(bytes)) }
      case .writeData(let bytes):
        precondition(
          bytes.count <= ATTMTU(clamping: conditions.mtu).maxWriteValue,
          "a write longer than MTU − 3 is refused by ATT")
        if connected { enqueueData(bytes) }
      case .armTimer(let due):
        senderTimer = due
      case .progress:
        break
      case .finished(let outcome):
        result.outcome = outcome
        if let host { result.receiver += host.engine.statistics }
      }
    }
  }

  private mutating func enqueueData(_ bytes: [UInt8]) {
    if random.chance(conditions.loss) {
      result.packetsLost += 1
      return
    }
    var packet = bytes
    if random.chance(conditions.bitFlips) {
      let bit = Int.random(in: 0..<(packet.count * 8), using: &random)
      packet[bit / 8] ^= 1 << UInt8(bit % 8)
      result.bitsFlipped += 1
    }
    uplink.append(.data(packet))
    if random.chance(conditions.duplication) {
      uplink.append(.data(packet))
      result.packetsDuplicated += 1
    }
  }
}

/// CPU time used by the calling thread so far.
func threadCPUTime() -> Duration {
  ProcessEnvironment.threadCPUTime()
}
