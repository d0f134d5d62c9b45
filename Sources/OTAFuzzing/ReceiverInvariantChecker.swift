import OTAEngine
import OTAJournal
import OTAWire

/// Watches what a `ReceiverEngine` asks of its host and says, and reports every broken safety rule.
/// It keeps its own record of the storage (which transfer the host holds, which slot passed its last
/// image check) and never reads the engine's internals, so an engine bug cannot hide itself.
public struct ReceiverInvariantChecker: Sendable {
  /// An image check that said valid, for this slot, size and CRC32, with no prepare or write since.
  struct ValidImage: Equatable, Sendable {
    var slot: SlotID
    var size: UInt32
    var crc32: UInt32
  }

  public let configuration: ReceiverConfiguration
  public internal(set) var runningSlot: SlotID
  public internal(set) var runningOnTrial: Bool
  public internal(set) var violations: [InvariantViolation] = []
  /// The transfer as the host last stored it (prepared or committed) in this engine's life.
  public internal(set) var transfer: TransferJournal?
  var validImage: ValidImage?
  var inFlight: ReceiverIO?
  /// Set when ACTIVATE's IO succeeded: only then may the engine ask for a restart.
  var activatedSlot: SlotID?
  var lastStatus: TransferStatus = .idle

  /// - Parameter resumedTransfer: the journal the engine starts from; a validated one is taken as
  ///   checked before this run began.
  public init(
    configuration: ReceiverConfiguration, runningSlot: SlotID, runningOnTrial: Bool,
    resumedTransfer: TransferJournal?
  ) {
    self.configuration = configuration
    self.runningSlot = runningSlot
    self.runningOnTrial = runningOnTrial
    transfer = resumedTransfer
    if let resumedTransfer, resumedTransfer.state == .validated {
      // Only a check before this run can have made this journal: the host model vouches for it.
      validImage = ValidImage(
        slot: resumedTransfer.slot, size: resumedTransfer.size, crc32: resumedTransfer.crc32)
    }
  }

  /// A new engine life: after a restart the host holds only what it stored.
  public mutating func restarted(runningSlot: SlotID, runningOnTrial: Bool, resumedTransfer: TransferJournal?)
  {
    self.runningSlot = runningSlot
    self.runningOnTrial = runningOnTrial
    transfer = resumedTransfer
    inFlight = nil
    activatedSlot = nil
    lastStatus = .idle
  }

  /// The host model learnt that the running trial was confirmed.
  public mutating func confirmed() { runningOnTrial = false }

  mutating func fail(_ invariant: String, _ detail: String) {
    violations.append(InvariantViolation(invariant, detail))
  }

  // MARK: What the engine says

  public mutating func engineNotified(_ bytes: [UInt8]) {
    if bytes.first == MissingReport.marker {
      missingReportNotified(bytes)
      return
    }
    if bytes.count > 20 { fail("notification fits in 20 bytes", "\(bytes.count) bytes: \(hex(bytes))") }
    do {
      let response = try Response(bytes: bytes)
      if case .offset(let offset) = response.payload, let transfer, offset > transfer.size {
        fail("answered offset inside the image", "\(offset) of \(transfer.size)")
      }
    } catch {
      fail("notification decodes", "\(hex(bytes)): \(error)")
    }
  }

  /// A missing-range report fits the largest MTU's notification, names ranges inside the image,
  /// and only ever comes while a transfer is under way.
  private mutating func missingReportNotified(_ bytes: [UInt8]) {
    if bytes.count > MissingReport.headerSize + MissingReport.maxRanges * MissingReport.rangeSize {
      fail("missing-range report fits in a notification", "\(bytes.count) bytes: \(hex(bytes))")
    }
    do {
      let report = try MissingReport(bytes: bytes)
      guard let transfer else {
        fail("missing-range report only while receiving", hex(bytes))
        return
      }
      if let range = report.ranges.first(where: { $0.upperBound > transfer.size }) {
        fail("missing range inside the image", "\(range) of \(transfer.size)")
      }
    } catch {
      fail("notification decodes", "\(hex(bytes)): \(error)")
    }
  }

  public mutating func engineAskedRestart() {
    if activatedSlot == nil { fail("restart only after activation", "restart asked with no activation done") }
  }

  public mutating func engineArmedTimer(at due: Duration, now: Duration) {
    if due < now { fail("timer in the future", "armed at \(due), now \(now)") }
  }

  /// After every event: the transfer the engine reports.
  public mutating func engineReports(_ status: TransferStatus) {
    defer { lastStatus = status }
    guard status.state != .idle else { return }
    if status.committedOffset > status.size {
      fail("committed offset within the size", "committed \(status.committedOffset) of \(status.size)")
    }
    let sameTransfer =
      lastStatus.state != .idle && lastStatus.size == status.size && lastStatus.crc32 == status.crc32
    if sameTransfer, status.committedOffset < lastStatus.committedOffset {
      fail(
        "committed offset only moves forward", "\(lastStatus.committedOffset) then \(status.committedOffset)")
    }
  }
}
