import OTASMP
import OTAWire

/// SMP over Bluetooth, the transport's own logic (pure): requests arrive cut across writes to the
/// SMP characteristic and are put together per central by the header's length; answers go back cut
/// into notifications of at most MTU − 3 bytes. Bounded: at most `maxCentrals` partial messages of
/// at most `maxMessage` bytes each, and a partial message is given up `timeout` after its central's
/// last write (or when it disconnects).
public struct SMPBluetoothSessions: Sendable {
  public static let defaultTimeout: Duration = .seconds(10)
  public static let maxCentrals = 8
  /// The largest ATT attribute value: no notification is longer, whatever the MTU.
  public static let maxNotification = 512

  public let maxMessage: Int
  public let timeout: Duration
  private var sessions: [String: Session] = [:]

  struct Session: Sendable {
    var assembler: SMPFrameAssembler
    var lastWrite: Duration
    var mtu: ATTMTU
  }

  public init(maxMessage: Int, timeout: Duration = Self.defaultTimeout) {
    self.maxMessage = maxMessage
    self.timeout = timeout
  }

  /// What a write (or the passing of time) led to, for one central.
  public enum Outcome: Equatable, Sendable {
    /// A whole message, to answer.
    case message([UInt8])
    /// A header announcing more than `maxMessage`: its bytes, to answer rc 7 (the rest of that
    /// central's partial message is dropped).
    case tooLarge(header: [UInt8])
    /// A message that never completed (its header's length lies, or the central stopped): what
    /// arrived, to answer as a header whose length lies is answered (rc 3).
    case abandoned([UInt8])
  }

  /// Centrals holding part of a message.
  public var pendingCentrals: Int { sessions.count }

  /// When the oldest partial message is given up.
  public var nextDeadline: Duration? { sessions.values.map { $0.lastWrite + timeout }.min() }

  /// One write from `central`, whose ATT MTU is `mtu`. A new central beyond `maxCentrals` pushes
  /// out the one that wrote longest ago (its partial message is dropped, unanswered).
  public mutating func receive(_ bytes: [UInt8], from central: String, mtu: ATTMTU, now: Duration)
    -> [Outcome]
  {
    var outcomes: [Outcome] = []
    if sessions[central] == nil, sessions.count >= Self.maxCentrals,
      let oldest = sessions.min(by: { $0.value.lastWrite < $1.value.lastWrite })?.key
    {
      sessions[oldest] = nil
    }
    var session =
      sessions[central]
      ?? Session(
        assembler: SMPFrameAssembler(maxBody: maxMessage - SMPHeader.byteCount), lastWrite: now, mtu: mtu)
    session.lastWrite = now
    session.mtu = mtu
    do {
      outcomes += try session.assembler.append(bytes).map(Outcome.message)
    } catch {
      if case .tooLarge = error { outcomes.append(.tooLarge(header: session.assembler.refusedHeader)) }
    }
    sessions[central] = session.assembler.pending > 0 ? session : nil
    return outcomes
  }

  /// Gives up the partial messages whose central has not written for `timeout`: each with its
  /// central and that central's MTU, to answer.
  public mutating func expire(now: Duration) -> [(central: String, mtu: ATTMTU, outcome: Outcome)] {
    let due = sessions.filter { now - $0.value.lastWrite >= timeout }.keys.sorted()
    return due.compactMap { central in
      guard var session = sessions.removeValue(forKey: central) else { return nil }
      return (central, session.mtu, .abandoned(session.assembler.takePending()))
    }
  }

  /// The central disconnected: what it sent of a message is dropped, unanswered.
  public mutating func forget(_ central: String) {
    sessions[central] = nil
  }

  /// An answer cut into notifications of at most MTU − 3 bytes (and never more than 512).
  public static func notifications(_ answer: [UInt8], mtu: ATTMTU) -> [[UInt8]] {
    let size = max(1, min(mtu.maxNotifyValue, maxNotification))
    return stride(from: 0, to: answer.count, by: size).map {
      Array(answer[$0..<min($0 + size, answer.count)])
    }
  }
}
