import OTANordicDFU
import OTAReceiverHost

/// Drives a Nordic DFU session (Legacy or Secure) on a receiver host as a client would, and keeps
/// what the device answered, noted and whether it restarts.
struct NordicDFUDriver<Device: NordicDFUSession> {
  var device: Device
  var host: ReceiverHost
  var notifications: [[UInt8]] = []
  var notes: [String] = []
  var restarted = false
  /// The firmware's packet size (nrfutil's at its default ATT MTU of 247; Legacy DFU's clients send 20).
  var packetSize = 244

  /// A control-point write; the notification it brought, if any.
  @discardableResult
  mutating func control(_ bytes: [UInt8]) throws -> [UInt8]? {
    let before = notifications.count
    record(try device.control(bytes, host: &host))
    return notifications.count > before ? notifications.last : nil
  }

  mutating func packet(_ bytes: [UInt8]) throws {
    record(try device.packet(bytes, host: &host))
  }

  mutating func record(_ output: NordicDFUOutput) {
    notifications += output.notifications
    if let note = output.note { notes.append(note) }
    restarted = restarted || output.restart
  }
}
