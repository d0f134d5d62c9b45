import OTADeltaPlan
import OTAWire

extension SenderEngine {
  /// Where the push stands, with the data that exists only at that stage: leaving a stage drops
  /// its data, so no field outlives the phase it belongs to.
  enum State: Sendable {
    case idle, connecting
    /// Info asked for; `hashes` while the block hashes it led to are being read.
    case readingInfo(hashes: BlockHashRead?)
    case checkingStatus, preparing
    case transferring(Transfer)
    case validating, activating
    /// Waiting for the device to come back; `deadline` once the restart is known to be under way.
    case restarting(deadline: Duration?)
    case verifying
    /// The new image runs on trial; `pollAt` is when to read Info again.
    case awaitingConfirmation(pollAt: Duration?)
    case confirming, finished

    var phase: SenderPhase {
      switch self {
      case .idle: .idle
      case .connecting: .connecting
      case .readingInfo: .readingInfo
      case .checkingStatus: .checkingStatus
      case .preparing: .preparing
      case .transferring: .transferring
      case .validating: .validating
      case .activating: .activating
      case .restarting: .restarting
      case .verifying: .verifying
      case .awaitingConfirmation: .awaitingConfirmation
      case .confirming: .confirming
      case .finished: .finished
      }
    }
  }

  /// The block hashes Info led to, while they are read: the Info to plan with once they are in,
  /// and the paged read (BLOCK HASHES, features bit 2) when the device pages them.
  struct BlockHashRead: Sendable {
    let info: InfoRecord
    var paging: BlockHashPaging?
  }

  /// What only a transfer has: the windows being streamed and answered, their size, and the
  /// chunks the device reported missing. A new one starts with each (re)started transfer.
  struct Transfer: Sendable {
    /// The size of new windows: it halves after a failed window (a smaller window is likelier to
    /// arrive whole on a bad link) and doubles back after a run of good ones, up to its largest.
    /// As many windows are open as fit in the device's window capacity, up to `maxWindowsInFlight`.
    var windowSize: UInt32
    var largestWindow: UInt32
    var goodWindowsInARow = 0
    var nextWindowStart: UInt32
    var tasks: [WindowTask] = []
    /// WINDOW commands sent and not yet answered, oldest first, with the time each was sent.
    var outstanding: [(window: Window, sentAt: Duration)] = []
    /// Chunk-sized ranges the device reported missing, to send before any new data.
    var resendQueue: [Range<UInt32>] = []
    /// Per resent chunk (by its offset): the new-data frontier and the time when it went out.
    var resentChunks: [UInt32: (frontier: UInt32, at: Duration)] = [:]
    /// One past the highest image byte sent since the transfer (re)started.
    var sentFrontier: UInt32
    /// The zstd frame to send next (features bit 4), and how far into its bytes.
    var nextFrame = 0
    var nextFramePosition = 0
    /// The target bytes sent as whole frames and not dropped since: their windows need no data.
    var framed: Range<UInt32> = 0..<0
    /// Where this transfer's frames start (the image's end without frames).
    var framesFrom: UInt32 = .max

    init(from offset: UInt32, windowSize: UInt32) {
      self.windowSize = windowSize
      self.largestWindow = windowSize
      self.nextWindowStart = offset
      self.sentFrontier = offset
    }
  }

  /// The transfer under way, nil in any other phase.
  var transfer: Transfer? {
    guard case .transferring(let transfer) = state else { return nil }
    return transfer
  }
}
