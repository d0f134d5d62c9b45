import OTALink
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
  /// The activation the device keeps (docs/OTAD.md, "The device has a say"): held and why,
  /// carried out, declined or lapsed, as a line.
  case activation(String)
  /// A fault asked for fired (docs/APP-TESTING.md): which, and what it did.
  case fault(String)
  /// One data write from the OTA central: where its target bytes start, its size, and what became of
  /// it. For the session report only (`otad run --sessions`): the trace counts windows, not writes.
  case dataWrite(offset: UInt32, bytes: Int, fate: DataWriteFate)
  /// An SMP request from `client` (its name, an upload's offset and data size) and its answer's rc
  /// (nil: none, or success).
  case smpRequest(client: String, command: String, offset: UInt64?, bytes: Int?)
  case smpAnswer(client: String, rc: UInt64?)
  /// An SMP client over Bluetooth went away.
  case smpClientGone(client: String)
  /// Nordic's Legacy or Secure DFU (session reports only): a command or a notification as a line, a
  /// firmware packet (where it lands, its size, what became of it), its central gone.
  case nordicDFU(NordicDFUService, String)
  case nordicDFUPacket(NordicDFUService, offset: UInt32, bytes: Int, fate: DataWriteFate)
  case nordicDFUGone(NordicDFUService)
  case stopped(signal: Int32)
}

/// What became of a data write: taken by the device, or lost or corrupted by a fault asked for.
public enum DataWriteFate: String, Equatable, Sendable {
  case taken
  case lostByFault = "lost by a fault"
  case corruptedByFault = "corrupted by a fault"
}
