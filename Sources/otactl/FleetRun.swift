import Foundation
import OTACentral
import OTAReport
import OTASender
import OTASocketLink
import OTAWire

/// What one push to several devices shows and keeps while it runs: each device's reporter (or its
/// line on the terminal's screen), and each device's outcome for the summary.
final class FleetRun {
  private let targets: [String]
  private let size: Int
  private let version: Version
  private let style: ProgressReporter.Style
  private let screen: FleetScreen?
  private var reporters: [ProgressReporter?]
  private var records: [FleetReport.Device?]
  /// The transfers that completed: from PREPARE to VALIDATE's answer.
  private var transfers: [(start: ContinuousClock.Instant, end: ContinuousClock.Instant)] = []
  private let clock = ContinuousClock()
  private let began: ContinuousClock.Instant

  init(targets: [String], size: Int, version: Version, style: ProgressReporter.Style, screen: FleetScreen?) {
    self.targets = targets
    self.size = size
    self.version = version
    self.style = style
    self.screen = screen
    reporters = Array(repeating: nil, count: targets.count)
    records = Array(repeating: nil, count: targets.count)
    began = clock.now
  }

  /// Device `index`'s turn has come: its reporter, its start said.
  func begin(_ index: Int, image: String, over link: String) -> ProgressReporter {
    let reporter = ProgressReporter(style: style, device: targets[index])
    reporter.start(image: image, size: size, version: version, over: link)
    reporters[index] = reporter
    screen?.started(index)
    return reporter
  }

  func progress(_ index: Int, _ progress: SenderProgress, _ report: SenderReport) {
    reporters[index]?.update(progress, report)
    screen?.update(index, progress, report)
  }

  /// Device `index`'s push ended: said as a single push says it, and kept for the summary.
  func end(_ index: Int, _ ending: FleetPush.Ending, _ session: PushSession?, conditions: LinkConditions?) {
    switch ending {
    case .finished(let outcome):
      guard let session else { return }
      reporters[index]?.finish(
        outcome, elapsed: session.sinceBegin, size: size, air: conditions.map(session.air),
        connectToReady: session.connectToReady, version: version,
        path: session.pathFigures(simulated: conditions != nil))
      record(index, outcome, session)
    case .unreachable(let reason):
      fail(index, .unreachable, reason)
    case .linkFailed(let error):
      fail(index, .unreachable, "the link failed: \(error)")
    }
    screen?.ended(index, Self.ending(records[index]))
  }

  private func record(_ index: Int, _ outcome: SenderOutcome, _ session: PushSession) {
    let report = outcome.report
    // The exit code this device would have had alone, and why when it is not 0.
    let (exitStatus, reason): (OtactlExitCode, String?) =
      switch outcome {
      case .succeeded: (.success, nil)
      case .activationKept(let kept, _):
        (kept.exitStatus, kept.exitStatus == .success ? nil : kept.explanation)
      case .failed(let failure, _): (failure.exitStatus, failure.explanation(device: report.deviceBefore))
      }
    var goodput: Double?
    if let start = report.transferStartedAt, let end = report.validatedAt {
      transfers.append((session.startedAt + start, session.startedAt + end))
      goodput = Double(size) / max(ProgressReporter.seconds(end - start), 1e-9)
    }
    records[index] = FleetReport.Device(
      device: targets[index], ok: exitStatus == .success, exitCode: Int(exitStatus.rawValue), reason: reason,
      runningVersion: report.deviceAfter.map { "\($0.runningVersion)" },
      confirmed: report.deviceAfter.map { !$0.flags.contains(.runningOnTrial) },
      resumedFrom: report.resumedFrom.map { Int($0) }, seconds: ProgressReporter.seconds(session.sinceBegin),
      goodput: goodput, bytesOnAir: Int(report.bytesOnAir))
  }

  /// A device whose push never started: its failure said (JSON: a tagged result line) and kept.
  private func fail(_ index: Int, _ code: OtactlExitCode, _ reason: String) {
    let device = targets[index]
    if style == .json {
      JSONOutput.line(
        FleetReport.Tagged(
          device: device,
          line: .failed(
            .init(
              exitCode: Int(code.rawValue), error: reason, seconds: 0, resumedFrom: [],
              lastOutcome: .init(nil))
          )))
    } else if style == .plain {
      FileHandle.standardError.write(Data("otactl: \(device): \(reason)\n".utf8))
    }
    records[index] = FleetReport.Device(
      device: device, ok: false, exitCode: Int(code.rawValue), reason: reason, runningVersion: nil,
      confirmed: nil, resumedFrom: [], seconds: 0, goodput: nil, bytesOnAir: 0)
  }

  /// A finished device's line on the screen.
  private static func ending(_ record: FleetReport.Device?) -> String {
    guard let record else { return "ended" }
    if record.ok {
      let rate = record.goodput.value.map { String(format: ", %.1f kB/s", $0 / 1000) } ?? ""
      // No version after it: validated, not activated (--no-activate) or scheduled on the device.
      return (record.runningVersion.value.map { "done: runs \($0)" } ?? "done: validated")
        + (record.confirmed.value == true ? ", confirmed" : "") + rate
    }
    // The screen has a line: the reason's first clause (the summary gives it whole).
    let reason = record.reason.value ?? ""
    let clause = reason.range(of: ": ").map { String(reason[..<$0.lowerBound]) } ?? reason
    return "\(FleetSummaryText.notOK(record.exitCode)) (exit \(record.exitCode)): \(clause)"
  }

  /// Every device's outcome and the figures of the whole push. `air`: the simulated link's, when
  /// every device is on it, for the aggregate capacity beside the aggregate goodput.
  func summary(parallel: Int, air: AirTime?) -> FleetReport.Summary {
    let devices = records.enumerated().map { index, record in
      record
        ?? FleetReport.Device(
          device: targets[index], ok: false, exitCode: Int(OtactlExitCode.unreachable.rawValue),
          reason: "never started", runningVersion: nil, confirmed: nil, resumedFrom: [], seconds: 0,
          goodput: nil, bytesOnAir: 0)
    }
    var aggregate: Double?
    if let first = transfers.map(\.start).min(), let last = transfers.map(\.end).max(), last > first {
      aggregate = Double(size * transfers.count) / ProgressReporter.seconds(last - first)
    }
    return FleetReport.Summary(
      devices: devices, parallel: parallel, seconds: ProgressReporter.seconds(clock.now - began),
      aggregateGoodput: aggregate,
      aggregateCapacity: air?.sharedCapacityBytesPerSecond(links: max(1, parallel)),
      physicalCeiling: air?.physicalCeilingBytesPerSecond)
  }
}
