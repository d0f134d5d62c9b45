import OTAFuzzing

/// The `interleaving` fuzz target: one device as otad wires it (the receiver host and its update
/// transaction, the SMP server, Nordic's Legacy and Secure DFU behind their central gates) driven
/// by all four protocols at once, two centrals and several UDP clients, with time passing,
/// restarts, power cuts and storage faults; `InterleavingInvariants` checks the device after every
/// step. A trap is a crash libFuzzer sees.
public enum InterleavingFuzzer {
  /// Steps per input, so one input cannot run for long.
  public static let maximumSteps = 1200

  /// How far a run got: what the tests ask of the seeds (that they reach deep).
  public struct Counts: Equatable, Sendable {
    public var activations = 0
    public var restarts = 0
    public var powerCuts = 0
    public var storageFailures = 0
    public var refusedWrites = 0
  }

  public struct Outcome: Sendable {
    public var violations: [InvariantViolation]
    public var counts: Counts
    public var trace: [String]
  }

  public static func check(_ bytes: [UInt8]) -> [InvariantViolation] { run(bytes).violations }

  public static func run(_ bytes: [UInt8], tracing: Bool = false) -> Outcome {
    var input = FuzzInput(bytes)
    var run: InterleavingRun
    do {
      run = try InterleavingRun()
    } catch {
      return Outcome(violations: [InvariantViolation("setup", "\(error)")], counts: Counts(), trace: [])
    }
    if tracing { run.trace = [] }
    var steps = 0
    while !input.isExhausted, steps < maximumSteps, run.violations.isEmpty {
      steps += 1
      run.step(&input)
    }
    return Outcome(violations: run.violations, counts: run.counts, trace: run.trace ?? [])
  }
}
