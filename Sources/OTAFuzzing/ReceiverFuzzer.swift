import OTAEngine
import OTAJournal
import OTAWire

/// The `receiver` fuzz target: a `ReceiverEngine` in a model device, driven by steps decoded from the
/// input, with every action checked by `ReceiverInvariantChecker`. The first bytes set the device up
/// (slot and window sizes, the running slot, a journal left by an earlier run); each later byte picks
/// a step. A trap inside the engine is a crash libFuzzer sees.
public enum ReceiverFuzzer {
  /// Steps per input, so one input cannot run for long.
  public static let maximumSteps = 2000

  public static func check(_ bytes: [UInt8]) -> [InvariantViolation] { run(bytes).violations }

  /// What one input did: its violations, and how far it got (for tests that seeds reach deep).
  public struct Outcome: Sendable {
    public var violations: [InvariantViolation]
    public var windowsCommitted: Int
    public var activations: Int
    /// Events and actions in order, when asked for.
    public var trace: [String]
  }

  public static func run(_ bytes: [UInt8], tracing: Bool = false) -> Outcome {
    var input = FuzzInput(bytes)
    var run = ReceiverFuzzRun(setup: ReceiverFuzzSetup(from: &input))
    if tracing { run.trace = ["setup \(run.configuration), running \(run.engine.runningSlot)"] }
    var steps = 0
    while !input.isExhausted, steps < maximumSteps, run.violations.isEmpty {
      steps += 1
      run.step(&input)
    }
    if run.violations.isEmpty { run.settle() }
    return Outcome(
      violations: run.violations, windowsCommitted: run.windowsCommitted, activations: run.activations,
      trace: run.trace ?? [])
  }
}

/// The device a fuzz run starts with, read from the input's first bytes.
public struct ReceiverFuzzSetup: Sendable {
  public var configuration: ReceiverConfiguration
  public var runningSlot: SlotID
  public var runningOnTrial: Bool
  /// Seeds the sender's image: byte `i` is a function of `i` and this.
  public var imageSeed: UInt8
  public var journal: TransferJournal?

  public init(from input: inout FuzzInput) {
    let capacity = input.pick([1, 2, 17, 100, 255, 1000, 4096])
    let window = input.pick([1, 3, 16, 64, 100, 256, 512, 4096, 65536] as [UInt32])
    let grace = input.int(in: 0...500)
    let queued = input.int(in: 0...5)
    let lossEvidence = input.int(in: 0...20)
    // The span from bytes read already (the seeds keep their meaning): one window (a device from
    // before the span), two or three, or the default sixteen.
    configuration = ReceiverConfiguration(
      slotCapacity: UInt64(capacity), windowCapacity: window, windowGrace: .milliseconds(grace),
      maxQueuedWindows: queued, lossEvidenceChunks: lossEvidence,
      receiveSpan: lossEvidence % 4 == 3 ? nil : window * UInt32(1 + lossEvidence % 4))
    runningSlot = input.bool() ? .b : .a
    runningOnTrial = input.byte() % 4 == 0
    imageSeed = input.byte()
    let journalKind = runningOnTrial ? 0 : input.byte() % 4
    journal = Self.journal(kind: journalKind, capacity: capacity, &input)
    if var journal, journalKind != 3 {
      journal.crc32 = SenderImage(seed: imageSeed).crc32(0..<Int(journal.size))
      self.journal = journal
    }
  }

  /// None, a transfer in progress into the inactive slot, a validated one, or any decodable record.
  private static func journal(kind: UInt8, capacity: Int, _ input: inout FuzzInput) -> TransferJournal? {
    switch kind {
    case 1, 2:
      let size = UInt32(input.int(in: 1...capacity))
      let committed = kind == 2 ? size : UInt32(input.int(in: 0...Int(size)))
      return TransferJournal(
        slot: input.bool() ? .b : .a, state: kind == 2 ? .validated : .receiving, size: size, crc32: 0,
        version: Version(major: 1, minor: 0, revision: 0), committedOffset: committed)
    case 3:
      let fields = TransferJournal(
        slot: input.bool() ? .b : .a, state: DeviceState(rawValue: input.byte() % 6) ?? .idle,
        size: input.bool() ? input.u32() : UInt32(input.int(in: 0...capacity + 1)), crc32: input.u32(),
        version: .zero, committedOffset: input.bool() ? input.u32() : UInt32(input.int(in: 0...capacity + 1)))
      return try? TransferJournal(bytes: fields.encoded)
    default:
      return nil
    }
  }
}
