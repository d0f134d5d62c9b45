import OTAJournal
import OTAWire

extension ReceiverEngine {
  /// Where the transfer stands, with the data that exists only while receiving: leaving that phase
  /// drops its stored bytes, windows, timer and pending operation, so none of them outlives the phase it belongs to.
  enum State: Sendable {
    case idle
    case preparing(TransferJournal)
    case receiving(Receiving)
    case validating(TransferJournal)
    case validated(TransferJournal)
    case activating(TransferJournal)

    var phase: Phase {
      switch self {
      case .idle: .idle
      case .preparing(let journal): .preparing(journal)
      case .receiving(let receiving): .receiving(receiving.journal)
      case .validating(let journal): .validating(journal)
      case .validated(let journal): .validated(journal)
      case .activating(let journal): .activating(journal)
      }
    }
  }

  /// What only the receiving phase has: the bytes stored past the committed offset, the WINDOWs
  /// waiting to be answered, the grace timer of the first, the failed write that fails its WINDOW,
  /// and the copy or patch waiting for its source.
  struct Receiving: Sendable {
    var journal: TransferJournal
    /// Stored, not yet committed bytes past the committed offset.
    var coverage = ByteRanges()
    var windows: [PendingWindow] = []
    var deadline: Duration?
    /// The lowest offset whose write failed since the last storage error was answered: the window
    /// holding it fails with "storage error", never with "missing data" (the bytes arrived; the
    /// device could not keep them).
    var failedWrite: UInt32?
    /// A copy or patch operation waiting for its `.readRunning`.
    var pendingOperation: DataOperation?
    /// The zstd frames being reassembled (features bit 4), created with the first part.
    var frames: FrameAssembly?
    /// The target offset of the frame waiting for its `.decodeFrame`.
    var pendingFrame: UInt32?

    init(_ journal: TransferJournal) { self.journal = journal }
  }

  /// The receiving phase's data, nil in any other phase.
  var receiving: Receiving? {
    guard case .receiving(let receiving) = state else { return nil }
    return receiving
  }

  /// Changes the receiving phase's data; nothing in any other phase, which has none.
  mutating func updateReceiving(_ change: (inout Receiving) -> Void) {
    guard case .receiving = state else { return }
    // The phase is moved out of the state, not copied, so that the change finds its arrays
    // uniquely held and mutates them in place (a copy would retain each, and a change with the
    // state still holding them would copy the windows and the coverage).
    var taken = State.idle
    swap(&state, &taken)
    switch consume taken {
    case .receiving(var receiving):
      change(&receiving)
      state = .receiving(receiving)
    case let other:
      state = other
    }
  }

  // Each accessor below reads its one field where the state holds it: going through `receiving`
  // would copy the whole phase (every array in it retained, then released) for one field, several
  // times per chunk.

  /// Stored, not yet committed bytes past the committed offset; none outside the receiving phase.
  public var coverage: ByteRanges {
    guard case .receiving(let receiving) = state else { return ByteRanges() }
    return receiving.coverage
  }

  /// The WINDOWs waiting to be answered, oldest first; none outside the receiving phase.
  var windows: [PendingWindow] {
    guard case .receiving(let receiving) = state else { return [] }
    return receiving.windows
  }

  /// The first waiting WINDOW, if any.
  var headWindow: PendingWindow? {
    guard case .receiving(let receiving) = state else { return nil }
    return receiving.windows.first
  }

  /// The journal of the transfer being received; nil in any other phase.
  var receivingJournal: TransferJournal? {
    guard case .receiving(let receiving) = state else { return nil }
    return receiving.journal
  }

  /// When the first waiting WINDOW's grace ends, once it waits for a gap.
  var deadline: Duration? {
    guard case .receiving(let receiving) = state else { return nil }
    return receiving.deadline
  }

  /// Whether parts of the zstd frame at `target` are held.
  func holdsFrame(at target: UInt32) -> Bool {
    guard case .receiving(let receiving) = state else { return false }
    return receiving.frames?.holds(target) ?? false
  }

  /// The zstd frames whose parts are held, and those parts' bytes; none outside the receiving phase.
  public var heldFrameParts: (frames: Int, bytes: Int) {
    guard case .receiving(let receiving) = state, let frames = receiving.frames else { return (0, 0) }
    return (frames.heldFrames, frames.heldBytes)
  }

  /// The lowest offset whose write failed since the last storage error was answered.
  public var failedWrite: UInt32? {
    guard case .receiving(let receiving) = state else { return nil }
    return receiving.failedWrite
  }
}
