import OTAWire

/// How the central pushes an image.
public struct SenderConfiguration: Equatable, Sendable {
  /// The version sent with PREPARE and expected to run after the restart.
  public var version: Version
  /// Go on to ACTIVATE and VERIFY after VALIDATE.
  public var activate: Bool
  /// Skip the trial boot (ACTIVATE flag bit 0).
  public var permanent: Bool
  /// How long a quick request (STATUS, WINDOW, FEATURES, CONFIRM, the Info read) may take to be
  /// answered.
  public var responseTimeout: Duration
  /// How long PREPARE (the device may erase), VALIDATE (it reads the whole image) and ACTIVATE (it
  /// checks the whole image again, as VALIDATE does) may take.
  public var slowResponseTimeout: Duration
  /// How long the device may take to come back after ACTIVATE.
  public var restartTimeout: Duration
  /// Attempts at one window (CRC mismatch, missing data, storage error) before giving up.
  public var maxWindowAttempts: Int
  /// Connection attempts in a row without progress before giving up.
  public var maxConnectAttempts: Int
  /// The first reconnect delay; it doubles up to `maxBackoff`.
  public var backoff: Duration
  public var maxBackoff: Duration
  /// A device busy with another central is asked again for at least this long, counted from its
  /// first busy answer, however few `maxConnectAttempts` allow: longer than the simulated device
  /// gives a central that connects and says nothing (its hello timeout, 3 s), so that such a
  /// central does not make a push give up.
  public var busyPatience: Duration
  /// The largest window is the device's window capacity divided by this: with 2, one window is
  /// checked while the next streams. Smaller windows (after failures) pipeline deeper.
  public var windowsInFlight: Int
  /// When the new image runs on trial: confirm it from here (CONFIRM) instead of waiting for the
  /// device's own verdict (its health check).
  public var confirm: Bool
  /// How long to wait, after the restart, for the device to confirm the trial or roll it back.
  public var trialTimeout: Duration
  /// How often Info is read while the trial waits for its verdict.
  public var trialPollInterval: Duration
  /// Announce this CRC32 in PREPARE instead of the image's: a fault injection for testing devices
  /// (the device must refuse the image at VALIDATE).
  public var announcedCRC: UInt32?
  /// Send the image even when the device already runs its version, confirmed.
  public var force: Bool
  /// How many value bytes each data write carries: `auto` fills whole link-layer packets.
  public var writeSize: WriteSize
  /// The link-layer payload of the link in use (251 with Data Length Extension, 27 without): the
  /// simulated link knows it, BlueZ does not tell a central (`WriteSize.assumedDataLength`).
  public var linkLayerDataLength: Int
  /// Turn on missing-range reports when the device announces them (Info features bit 0): resend
  /// only what the device names, keep streaming, never shrink windows for loss. Off acts as a
  /// central from before the feature.
  public var missingRangeReports: Bool
  /// A range resent once is resent again on a new report only when chunks sent after the resend
  /// arrived without it, or after this long (the device repeats its report after its grace).
  public var resendTimeout: Duration
  /// Send data operations (compressed or delta) when the device announces them (Info features
  /// bit 1) and they would send fewer bytes; off (`otactl push --full`) always sends plain chunks.
  public var operations: Bool
  /// Read Info, work out what would be sent, and stop: nothing changes on the device.
  public var dryRun: Bool
  /// After VALIDATE, send SCHEDULE with this window instead of ACTIVATE (with `activate`; the
  /// window's `permanent` is `permanent`'s): the device activates on its own within it. Needs Info
  /// features bit 5; a device without it is refused before anything is sent.
  public var schedule: ActivationWindow?

  public init(
    version: Version, activate: Bool = true, permanent: Bool = false,
    responseTimeout: Duration = .seconds(5), slowResponseTimeout: Duration = .seconds(60),
    restartTimeout: Duration = .seconds(60), maxWindowAttempts: Int = 8, maxConnectAttempts: Int = 8,
    backoff: Duration = .milliseconds(100), maxBackoff: Duration = .seconds(5),
    busyPatience: Duration = .seconds(10), windowsInFlight: Int = 2,
    confirm: Bool = false, trialTimeout: Duration = .seconds(300), trialPollInterval: Duration = .seconds(1),
    announcedCRC: UInt32? = nil, force: Bool = false, writeSize: WriteSize = .auto,
    linkLayerDataLength: Int = WriteSize.assumedDataLength, missingRangeReports: Bool = true,
    resendTimeout: Duration = .milliseconds(300), operations: Bool = true, dryRun: Bool = false,
    schedule: ActivationWindow? = nil
  ) {
    self.schedule = schedule
    self.operations = operations
    self.dryRun = dryRun
    self.missingRangeReports = missingRangeReports
    self.resendTimeout = resendTimeout
    self.writeSize = writeSize
    self.linkLayerDataLength = linkLayerDataLength
    self.force = force
    self.confirm = confirm
    self.trialTimeout = trialTimeout
    self.trialPollInterval = trialPollInterval
    self.version = version
    self.activate = activate
    self.permanent = permanent
    self.responseTimeout = responseTimeout
    self.slowResponseTimeout = slowResponseTimeout
    self.restartTimeout = restartTimeout
    self.maxWindowAttempts = maxWindowAttempts
    self.maxConnectAttempts = maxConnectAttempts
    self.backoff = backoff
    self.maxBackoff = maxBackoff
    self.busyPatience = busyPatience
    self.windowsInFlight = max(1, windowsInFlight)
    self.announcedCRC = announcedCRC
  }
}

public enum SenderEvent: Sendable {
  case start(now: Duration)
  /// The link is up and the OTA service found.
  case connected(mtu: ATTMTU, now: Duration)
  case connectFailed(reason: String, now: Duration)
  /// The device refused the connection because it serves another central (the simulated link's
  /// busy answer): asked again, patiently (`SenderConfiguration.busyPatience`).
  case deviceBusy(now: Duration)
  case disconnected(now: Duration)
  /// The whole Info value (the host did the long read).
  case info([UInt8], now: Duration)
  /// The whole block-hashes value (empty: none to be had).
  case blockHashes([UInt8], now: Duration)
  /// A control-point notification.
  case notification([UInt8], now: Duration)
  /// The link can take this many more write-without-response packets now.
  case writable(count: Int, now: Duration)
  /// Data goes over an L2CAP channel whose SDUs take chunks of this many image bytes (nil: back to
  /// GATT). Comes after `.connected` and before the Info read it applies to.
  case dataChannel(maxChunkPayload: Int?, now: Duration)
  case tick(now: Duration)
}

public enum SenderAction: Equatable, Sendable {
  /// Connect after this delay; answer with `.connected` or `.connectFailed`.
  case connect(after: Duration)
  case disconnect
  case readInfo
  /// Read the running slot's block hashes; answer with `.blockHashes`.
  case readBlockHashes
  case writeControl([UInt8])
  /// A write-without-response to the data characteristic; only ever asked for within the credit given.
  case writeData([UInt8])
  /// Deliver `.tick` at or after this time (replaces any earlier timer).
  case armTimer(at: Duration)
  case progress(SenderProgress)
  case finished(SenderOutcome)
}

/// The five phases (and the connection steps around them) as a person reads them.
public enum SenderPhase: String, Equatable, Sendable {
  case idle, connecting, readingInfo, checkingStatus, preparing, transferring, validating, activating
  case restarting, verifying, awaitingConfirmation, confirming, finished
}

public struct SenderProgress: Equatable, Sendable {
  public var phase: SenderPhase
  /// Bytes the device has committed (durable).
  public var committed: UInt32
  public var total: UInt32
  /// Data-write bytes sent so far (operations or chunks with their headers, resends included).
  public var bytesOnAir: UInt64

  public init(phase: SenderPhase, committed: UInt32, total: UInt32, bytesOnAir: UInt64 = 0) {
    self.phase = phase
    self.committed = committed
    self.total = total
    self.bytesOnAir = bytesOnAir
  }
}

/// How the image's bytes travel.
public enum TransferMode: Equatable, Sendable {
  /// Plain chunks (the base protocol).
  case plain
  /// Data operations without a base: raw and deflate.
  case compressed
  /// Data operations against the running image, which matched the base at this index.
  case delta(base: Int)
  /// Data operations copying the blocks whose hashes the device listed, without a base.
  case blockHashes

  /// Copies or patches: bytes that depend on the running slot being what the plan took it for.
  public var readsTheRunningSlot: Bool {
    switch self {
    case .delta, .blockHashes: true
    case .plain, .compressed: false
    }
  }
}

public struct SenderReport: Equatable, Sendable {
  /// Image bytes sent in data chunks, resends included.
  public var bytesSent: UInt64 = 0
  /// Every data-write byte sent (chunk or operation headers, compressed payloads), resends included.
  public var bytesOnAir: UInt64 = 0
  /// How the bytes travelled (the last connection's choice).
  public var transferMode: TransferMode = .plain
  /// The figures the choice was made on: the data bytes of the whole image as operations (as zstd
  /// frames' parts when those go) and as plain chunks (0 when operations were not considered).
  public var plannedBytesOnAir: UInt64 = 0
  public var plainBytesOnAir: UInt64 = 0
  /// Data writes sent as the estimate computed them (not deflated a second time while sending).
  public var plannedWritesSent = 0
  /// The data bytes of the whole image as zstd frames' parts, when the delta came with frames the
  /// device takes (features bit 4); 0 otherwise.
  public var plannedFrameBytesOnAir: UInt64 = 0
  /// zstd frames sent whole, and the writes their parts took.
  public var framesSent = 0
  public var framePartsSent = 0
  /// The block size of the running slot's hashes the plan used, and how many hashes were read
  /// (BLOCK HASHES pages, or the one-value characteristic); 0 when none were read.
  public var blockSize: UInt32 = 0
  public var blockHashesRead = 0
  /// BLOCK HASHES requests sent (0 on the characteristic's path).
  public var blockHashRequests = 0
  /// The push only read Info and planned (`dryRun`).
  public var dryRun = false
  public var chunksSent = 0
  /// Data operations sent (with packed operations several per write, counted in `chunksSent` once).
  public var operationsSent = 0
  /// Of those, the image bytes and chunks sent again (after a loss, a failed window or a resume).
  public var bytesResent: UInt64 = 0
  public var chunksResent = 0
  /// Missing-range reports received (the feature on) and the ranges they named.
  public var missingReports = 0
  public var windowsCommitted = 0
  public var windowFailures = 0
  public var reconnects = 0
  /// Where each resumed transfer picked up (committed offset reported by STATUS).
  public var resumedFrom: [UInt32] = []
  /// The device as first seen, before anything moved.
  public var deviceBefore: InfoRecord?
  /// The device as seen after the restart (when activated).
  public var deviceAfter: InfoRecord?
  /// The device already ran this version, confirmed: nothing was sent (no `force`).
  public var alreadyRunning = false
  /// The device already ran this version on trial (an earlier push activated it): nothing was sent,
  /// the push waited for (or, with `confirm`, gave) the trial's verdict.
  public var joinedTrial = false
  /// When the transfer began (the first PREPARE sent, or the first resume from STATUS) and when
  /// VALIDATE was answered with success, in the events' time: the transfer's own duration,
  /// without the connection, Info and STATUS before it or the activation after it.
  public var transferStartedAt: Duration?
  public var validatedAt: Duration?
  public init() {}
}

public enum SenderOutcome: Equatable, Sendable {
  case succeeded(SenderReport)
  /// The image is validated on the device, which keeps its activation and carries it out on its
  /// own: neither the transfer's failure nor the new version running.
  case activationKept(ActivationKept, SenderReport)
  case failed(PushFailure, SenderReport)

  /// What the push did, however it ended.
  public var report: SenderReport {
    switch self {
    case .succeeded(let report), .activationKept(_, let report), .failed(_, let report): report
    }
  }
}

/// Why a push failed, each with what a person needs to act on it.
public enum PushFailure: Error, Equatable, Sendable {
  case tooLarge(size: Int, capacity: UInt32)
  case refused(Opcode, StatusCode)
  case windowRetriesExhausted(offset: UInt32, status: StatusCode, attempts: Int)
  case validationFailed(StatusCode)
  case rolledBack(running: Version, reason: UpdateOutcome.Reason)
  case wrongVersionAfterRestart(expected: Version, running: Version)
  /// The new image ran on trial, but neither the device nor anybody else confirmed it in time.
  case notConfirmed(Version, waited: Duration)
  case unreachable(attempts: Int, lastReason: String)
  /// Every connection attempt of the last `waited` was refused: the device serves another central.
  case deviceBusy(attempts: Int, waited: Duration)
  case timedOut(SenderPhase)
  case protocolError(String)
  /// The device's owner declined this update (ACTIVATE answered `0x0F`): the device dropped it.
  case declined
  /// A scheduled activation was asked of a device that takes no SCHEDULE (Info features bit 5):
  /// found in Info, before anything was sent (or answered `0x01` to SCHEDULE).
  case schedulingUnsupported
}
