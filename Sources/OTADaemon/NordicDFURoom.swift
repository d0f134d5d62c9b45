import OTAFaults
import OTAJournal
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTAStorage

/// Nordic's Legacy and Secure DFU as the daemon serves them (docs/NORDIC-DFU.md): each service's
/// session (an adapter over the host's update transaction) and the gate that says which central it
/// belongs to. What it decides is values; the daemon's loop sends, logs and restarts.
struct NordicDFURoom {
  /// The sessions the configuration serves.
  var sessions: [NordicDFUService: any NordicDFUSession] = [:]
  /// Which central each service's session belongs to.
  var gates: [NordicDFUService: NordicDFUCentralGate] = [:]

  enum Admission: Equatable {
    /// The write is the session's.
    case admit
    /// Another central's session holds the service: the write is dropped; the line for the log,
    /// at warning for the first of that central's drops.
    case refused(String, warn: Bool)
  }

  /// A write from `central`: the session's, or dropped while another central's is under way (its
  /// central wrote within the lease). A session that was idle or quiet ends when another central
  /// takes the service over, and the device is free for another protocol.
  mutating func admit(
    _ service: NordicDFUService, from central: String, now: Duration, host: inout ReceiverHost
  )
    -> Admission
  {
    var gate = gates[service] ?? NordicDFUCentralGate(leaseTimeout: UpdateTransaction.leaseTimeout)
    defer { gates[service] = gate }
    switch gate.admit(central, now: now, sessionActive: sessions[service]?.active == true) {
    case .admit:
      return .admit
    case .takeOver:
      _ = sessions[service]?.disconnected()
      host.release(service.owner)
      return .admit
    case .refuse(let owner, let refused):
      return .refused(
        "\(service.rawValue): a write from \(central) dropped: \(owner)'s session is under way"
          + (refused == 1 ? "" : " (\(refused) dropped)"), warn: refused == 1)
    }
  }

  /// `central` went: when it was the session's, the session ends (its output), and the device is
  /// free for another protocol at once; nil when it was not.
  mutating func gone(_ service: NordicDFUService, central: String, host: inout ReceiverHost)
    -> NordicDFUOutput?
  {
    guard gates[service]?.gone(central) == true, var session = sessions[service] else { return nil }
    host.release(service.owner)
    let output = session.disconnected()
    sessions[service] = session
    return output
  }

  /// The session's central is dropped (a fault asked): its session ends now (its output), and who
  /// the central was (nil: none held it).
  mutating func drop(_ service: NordicDFUService, host: inout ReceiverHost) -> (
    NordicDFUOutput?, central: String?
  ) {
    let output = sessions[service]?.disconnected()
    host.release(service.owner)
    return (output, gates[service]?.release())
  }

  /// One step of `service`'s session on the host. A storage failure on the way is answered, when
  /// the step was a control-point command (`answeringFailureOf` its opcode), as the service's own
  /// "operation failed", and ends the session: it never ends the daemon. Nil: no such service.
  mutating func step(
    _ service: NordicDFUService, answeringFailureOf opcode: UInt8?, host: inout ReceiverHost,
    _ step: (inout any NordicDFUSession, inout ReceiverHost) throws(StorageError) -> NordicDFUOutput
  ) throws(StorageError) -> NordicDFUOutput? {
    guard var session = sessions[service] else { return nil }
    defer { sessions[service] = session }
    do {
      return try step(&session, &host)
    } catch .powerCut {
      throw .powerCut
    } catch {
      var output = session.disconnected()
      output.note = "storage failed: \(error.explanation); the session ends"
      if let opcode {
        output.notifications = [service == .legacy ? [0x10, opcode, 0x06] : [0x60, opcode, 0x0A]]
      }
      return output
    }
  }

  /// How far a session's firmware has come, for a fault's point.
  func progress(_ service: NordicDFUService) -> FaultBook.Progress {
    guard let progress = sessions[service]?.firmwareProgress else { return .start }
    return FaultBook.Progress(end: UInt64(progress.received), imageSize: UInt64(progress.size))
  }
}

extension NordicDFUService {
  /// The update transaction's name for this service's transfers.
  var owner: TransferOwner { self == .legacy ? .legacyDFU : .secureDFU }
}
