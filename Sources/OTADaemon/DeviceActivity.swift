import OTAWire

/// What the daemon did, as it does it: the events a trace (`otad run --trace`) or a watcher is
/// told, from the same places that log them. One per request, response or boot step: a window is
/// one request and one response, never one event per chunk.
public enum DeviceActivity: Equatable, Sendable {
  /// The boot stage's decision: the table's row, the slot that runs, whether it restarts at once;
  /// for a rollback the outcome's reason.
  case bootDecision(row: String, run: String, version: String, restart: Bool, rolledBack: String?)
  /// The daemon serves: the slot it runs and whether that slot is on trial.
  case serving(slot: String, version: String, onTrial: Bool, committed: UInt32)
  case connected(mtu: ATTMTU)
  case disconnected(committed: UInt32)
  /// A control-point request: its opcode's name, and a window's offset and length.
  case request(String, offset: UInt32?, length: UInt32?)
  /// The answer to one: the status, the committed offset a window answer carries, and the reason an
  /// image was refused.
  case response(String, status: String, offset: UInt32?, reason: String?)
  case healthCheck(passed: Bool, detail: String)
  /// A trial's verdict: confirmed, a failed boot, or a rollback.
  case verdict(String)
  case restart(reason: String)
  case stopped(signal: Int32)
}
