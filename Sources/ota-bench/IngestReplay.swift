import OTAEngine
import OTAReceiverHost
import OTAStorage
import OTASystem

/// The device's events replayed into a host, measured as a whole: two clock reads for the wall
/// time and two for the process's CPU time, nothing per event.
struct IngestReplay {
  var wall: Duration = .zero
  var cpu: Duration = .zero

  /// Kept out of main.swift, whose top-level code runs on the main actor: there every call in the
  /// loop would pay an executor check.
  static func run(_ events: [ReceiverEvent], into host: inout ReceiverHost) throws(StorageError)
    -> IngestReplay
  {
    let clock = ContinuousClock()
    let startedCPU = ProcessEnvironment.processCPUTime()
    let started = clock.now
    for event in events { _ = try host.handle(event) }
    let wall = clock.now - started
    return IngestReplay(wall: wall, cpu: ProcessEnvironment.processCPUTime() - startedCPU)
  }
}
