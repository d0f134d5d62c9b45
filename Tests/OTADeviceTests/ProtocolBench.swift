import OTABoot
import OTAChecksum
import OTAReceiverHost
import OTAStorage
import OTATrust
import OTAWire
import Testing

/// A device on in-memory storage spoken to in raw protocol bytes, as a hostile central would: every
/// write goes straight to the `ReceiverHost`, every answer is decoded. For the attack table
/// (docs/SECURITY.md): each row sends something bad and checks what the device answered and that
/// nothing was lost.
struct ProtocolBench {
  var fixture: DeviceFixture
  private(set) var host: ReceiverHost
  private var now: Duration = .zero
  let chunkPayload = 200

  /// `recordRunningImage`: the boot state knows slot A's image (size, CRC32), as after an
  /// activation, so copy and patch operations may read it.
  /// `runningImage`: slot A's bytes (by default 3000 random ones); `features`: what the device
  /// announces.
  init(
    policy: ImagePolicy = ImagePolicy(), slotCapacity: Int = 64 * 1024, recordRunningImage: Bool = false,
    runningImage: [UInt8]? = nil, features: Features = .all, mtu: ATTMTU = 247, pairingRequired: Bool = false
  ) throws {
    fixture = DeviceFixture(slotCapacity: slotCapacity, windowCapacity: 4096, runningImage: runningImage)
    fixture.policy = policy
    fixture.features = features
    fixture.pairingRequired = pairingRequired
    if recordRunningImage { try fixture.recordRunningImage() }
    host = try fixture.makeHost()
    _ = try host.handle(.connected(mtu: mtu))
  }

  /// Every control-point notification one write caused, decoded.
  mutating func control(_ bytes: [UInt8]) throws -> [Response] {
    try controlBytes(bytes).map { try Response(bytes: $0) }
  }

  /// Every control-point notification one write caused, as the bytes that went on the air.
  mutating func controlBytes(_ bytes: [UInt8]) throws -> [[UInt8]] {
    now += .milliseconds(10)
    return try host.handle(.control(bytes, now: now)).compactMap { output in
      guard case .notify(let notification) = output else { return nil }
      return notification
    }
  }

  /// The one answer a request gets.
  mutating func answer(_ request: Request) throws -> Response {
    let answers = try control(request.encoded)
    try #require(answers.count == 1, "expected one answer to \(request.opcode), got \(answers)")
    return answers[0]
  }

  /// A data write; returns the notifications it caused (a WINDOW waiting for it may be answered).
  @discardableResult mutating func data(_ bytes: [UInt8]) throws -> [[UInt8]] {
    now += .milliseconds(1)
    return try host.handle(.data(bytes, now: now)).compactMap { output in
      guard case .notify(let notification) = output else { return nil }
      return notification
    }
  }

  /// Lets `duration` pass; returns the notifications the device's timer caused.
  mutating func tick(after duration: Duration) throws -> [[UInt8]] {
    now += duration
    return try host.handle(.tick(now: now)).compactMap { output in
      guard case .notify(let notification) = output else { return nil }
      return notification
    }
  }

  /// The central writes over another bearer with its own MTU (EATT): the device hears of the MTU.
  mutating func bearer(mtu: ATTMTU) throws { _ = try host.handle(.connected(mtu: mtu)) }

  /// The link drops and the central connects again.
  mutating func reconnect(mtu: ATTMTU = 247) throws {
    _ = try host.handle(.disconnected)
    _ = try host.handle(.connected(mtu: mtu))
  }

  /// PREPARE, every window, VALIDATE: the first status that is not success, else VALIDATE's.
  /// `claimedSize`/`claimedVersion` let the central lie in PREPARE.
  mutating func push(
    _ image: [UInt8], version: Version, claimedSize: UInt32? = nil, claimedVersion: Version? = nil
  ) throws -> StatusCode {
    let size = claimedSize ?? UInt32(image.count)
    let prepared = try answer(
      .prepare(size: size, crc32: CRC32.checksum(image), version: claimedVersion ?? version))
    guard prepared.status == .success else { return prepared.status }
    let window = Int(host.engine.configuration.windowCapacity)
    var start = 0
    while start < image.count {
      let end = min(start + window, image.count)
      var offset = start
      while offset < end {
        let chunkEnd = min(offset + chunkPayload, end)
        try data(DataChunk(offset: UInt32(offset), payload: image[offset..<chunkEnd]).encoded)
        offset = chunkEnd
      }
      let answer = try answer(
        .window(offset: UInt32(start), length: UInt32(end - start), crc32: CRC32.checksum(image[start..<end]))
      )
      guard answer.status == .success else { return answer.status }
      start = end
    }
    return try answer(.validate).status
  }

  /// A full update: push, ACTIVATE, the restart and a trial whose health check passes.
  mutating func install(_ image: [UInt8], version: Version) throws {
    let validated = try push(image, version: version)
    try #require(validated == .success, "VALIDATE answered \(validated)")
    try #require(try answer(.activate(permanent: false)).status == .success)
    try restart()
    try #require(host.boot[host.boot.confirmed].version == version)
  }

  /// The device restarts: boot stage, then a new daemon (a trial on it passes its health check).
  mutating func restart(verdict: DeviceFixture.TrialVerdict = .passes) throws {
    host = try fixture.boot(verdict: verdict)
    _ = try host.handle(.connected(mtu: 247))
  }

  /// What must survive any attack: the confirmed slot's bytes and the boot state's verdicts.
  struct Snapshot: Equatable {
    var confirmed: SlotID
    var confirmedBytes: [UInt8]
    var confirmedSlot: BootState.Slot
    var plan: BootPlan?
    var securityFloor: UInt32
  }

  var snapshot: Snapshot {
    let confirmed = host.boot.confirmed
    return Snapshot(
      confirmed: confirmed, confirmedBytes: fixture.medium.slotBytes(confirmed),
      confirmedSlot: host.boot[confirmed],
      plan: fixture.bootloader.appliedPlans.last, securityFloor: host.boot.securityFloor)
  }

  /// What an attack cost, empty when nothing was lost: the same confirmed image, untouched, no
  /// trial armed, the bootloader told nothing new. (Descriptions, not the bench itself, so that a
  /// failure message stays readable.)
  func losses(since before: Snapshot) -> [String] {
    let now = snapshot
    var lost: [String] = []
    if now.confirmed != before.confirmed {
      lost.append("confirmed slot \(before.confirmed) → \(now.confirmed)")
    }
    if fixture.medium.slotBytes(before.confirmed) != before.confirmedBytes {
      lost.append("slot \(before.confirmed)'s bytes changed")
    }
    if now.confirmedSlot != before.confirmedSlot {
      lost.append("\(before.confirmedSlot) → \(now.confirmedSlot)")
    }
    if now.plan != before.plan { lost.append("bootloader told \(String(describing: now.plan))") }
    if now.securityFloor != before.securityFloor {
      lost.append("security floor \(before.securityFloor) → \(now.securityFloor)")
    }
    if let trial = host.boot.trial { lost.append("trial armed: \(trial)") }
    if host.running != before.confirmed { lost.append("runs slot \(host.running)") }
    return lost
  }
}
