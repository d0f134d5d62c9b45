import Foundation
import OTACentral
import OTALink
import OTAReport
import OTASender
import OTASocketLink
import OTAWire

/// Shows a push as it goes: a progress bar on a terminal, plain lines in a pipe or log, or JSON
/// lines for scripts. Progress is what the device acknowledged (committed), not what was sent.
final class ProgressReporter {
  /// `silent`: nothing at all, for a device of several on a terminal (`FleetScreen` shows them).
  enum Style { case terminal, plain, json, silent }

  let style: Style
  /// The device this reporter speaks of, when a push updates several: JSON lines carry it in a
  /// `device` key, text lines begin with it.
  let device: String?
  /// The `--base` files, to name the one a delta used.
  var baseNames: [String] = []
  private let clock = ContinuousClock()
  private let started: ContinuousClock.Instant
  private var lastPhase: SenderPhase?
  private var lastDecile = -1
  private var resumesShown = 0
  private var lastDraw: ContinuousClock.Instant?

  init(style: Style, device: String? = nil) {
    self.style = style
    self.device = device
    started = clock.now
  }

  func start(image: String, size: Int, version: Version, over link: String) {
    switch style {
    case .silent: return
    case .json:
      emit(PushReport.start(.init(image: image, size: size, version: "\(version)", link: link)))
    case .terminal, .plain:
      line("pushing \(image) (\(size) bytes, version \(version)) over \(link)")
    }
  }

  func update(_ progress: SenderProgress, _ report: SenderReport) {
    guard style != .silent else { return }
    let seconds = elapsedSeconds
    if report.resumedFrom.count > resumesShown {
      resumesShown = report.resumedFrom.count
      if let offset = report.resumedFrom.last, offset > 0 {
        clearBar()
        if style == .json {
          emit(PushReport.resume(.init(offset: Int(offset))))
        } else {
          line("resuming from byte \(offset) (committed on the device)")
        }
      }
    }
    if progress.phase != lastPhase {
      lastPhase = progress.phase
      if style == .json {
        emit(PushReport.phase(.init(phase: progress.phase.rawValue, t: seconds)))
      } else if style == .plain {
        line("[\(String(format: "%6.2f", seconds))s] \(progress.phase.rawValue)")
      }
    }
    guard progress.total > 0 else { return }
    let fraction = Double(progress.committed) / Double(progress.total)
    switch style {
    case .json:
      emit(
        PushReport.progress(
          .init(
            committed: Int(progress.committed), total: Int(progress.total),
            bytesOnAir: Int(progress.bytesOnAir),
            t: seconds)))
    case .plain:
      let decile = Int(fraction * 10)
      if decile > lastDecile {
        lastDecile = decile
        line(
          "  \(Int(fraction * 100))% committed (\(progress.committed) of \(progress.total) bytes, "
            + "\(progress.bytesOnAir) on air)")
      }
    case .terminal:
      drawBar(progress, fraction: fraction, seconds: seconds)
    case .silent:
      break
    }
  }

  /// `air`: the simulated link's model, for the raw capacity (nil on a real link).
  func finish(
    _ outcome: SenderOutcome, elapsed: Duration, size: Int, air: AirTime?, connectToReady: Duration?,
    version: Version, path: LinkPathFigures
  ) {
    guard style != .silent else { return }
    clearBar()
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let goodput = Double(size) / max(seconds, 1e-9)
    let finalReport = outcome.report
    let transferSeconds = finalReport.transferStartedAt.flatMap { start in
      finalReport.validatedAt.map { Self.seconds($0 - start) }
    }
    let transferGoodput = transferSeconds.map { Double(size) / max($0, 1e-9) }
    let raw = air?.dataPathBytesPerSecond
    let ceiling = air?.physicalCeilingBytesPerSecond
    switch outcome {
    case .succeeded(let report), .activationKept(.scheduled, let report):
      if style == .json {
        let linkFigures = air.flatMap { air in raw.map { (raw: $0, mtu: air.conditions.mtu) } }
        emit(
          PushReport.succeeded(
            .init(
              seconds: seconds, goodput: goodput, bytesSent: Int(report.bytesSent),
              bytesOnAir: Int(report.bytesOnAir), transferMode: Self.modeName(report.transferMode),
              plannedBytesOnAir: Int(report.plannedBytesOnAir), plainBytesOnAir: Int(report.plainBytesOnAir),
              blockSize: Int(report.blockSize), blockHashesRead: report.blockHashesRead,
              blockHashRequests: report.blockHashRequests, dryRun: report.dryRun,
              windows: report.windowsCommitted, windowFailures: report.windowFailures,
              bytesResent: Int(report.bytesResent), chunksResent: report.chunksResent,
              missingReports: report.missingReports, reconnects: report.reconnects,
              resumedFrom: report.resumedFrom.map { Int($0) },
              runningVersion: .init(report.deviceAfter.map { "\($0.runningVersion)" }),
              runningSlot: .init(report.deviceAfter.map { "\($0.runningSlot)" }),
              confirmed: .init(report.deviceAfter.map { !$0.flags.contains(.runningOnTrial) }),
              alreadyRunning: report.alreadyRunning, joinedTrial: report.joinedTrial,
              rawCapacity: linkFigures?.raw, ratio: linkFigures.map { goodput / $0.raw },
              physicalCeiling: ceiling, ceilingRatio: ceiling.map { goodput / $0 }, mtu: linkFigures?.mtu,
              connectToReady: connectToReady.map(Self.seconds), transferSeconds: transferSeconds,
              transferGoodput: transferGoodput,
              transferCeilingRatio: transferGoodput.flatMap { g in ceiling.map { g / $0 } },
              dataPath: path.dataPath, attMTU: path.attMTU, l2capPSM: path.channel.map { Int($0.psm) },
              l2capMTU: path.channel?.parameters.sendMTU,
              l2capReceiveMTU: path.channel?.parameters.receiveMTU,
              phy: path.phy, connectionInterval: path.link?.timing.intervalMilliseconds,
              peripheralLatency: path.link.map { Int($0.timing.peripheralLatency) },
              supervisionTimeout: path.link?.timing.supervisionTimeoutMilliseconds,
              dataLengthTx: path.link?.dataLength.map { Int($0.maxTxOctets) },
              dataLengthRx: path.link?.dataLength.map { Int($0.maxRxOctets) },
              dataLengthTxTime: path.link?.dataLength.map { Int($0.maxTxTime) },
              dataLengthRxTime: path.link?.dataLength.map { Int($0.maxRxTime) },
              plannedFrameBytesOnAir: report.plannedFrameBytesOnAir > 0
                ? Int(report.plannedFrameBytesOnAir) : nil,
              framesSent: report.plannedFrameBytesOnAir > 0 ? report.framesSent : nil,
              activation: PushReport.Activation(outcome))))
        return
      }
      let after = report.deviceAfter.map {
        "the device runs \($0.runningVersion) from slot \($0.runningSlot)"
          + ($0.lastOutcome.result == .succeeded && $0.lastOutcome.to == $0.runningVersion
            ? ", confirmed after \($0.lastOutcome.attemptsUsed) trial boot(s)" : "")
      }
      if report.dryRun {
        line(dryRunSummary(report, size: size))
        return
      }
      if report.alreadyRunning, let info = report.deviceAfter {
        line(
          "nothing sent: the device already runs \(info.runningVersion) from slot \(info.runningSlot), "
            + "confirmed (--force sends the image again)")
        return
      }
      if report.joinedTrial {
        line("\(version) was already on trial on the device: nothing sent, waited for the trial's verdict")
      }
      if !path.simulated { line("  link: \(path.description)") }
      line(
        """
        done in \(String(format: "%.2f", seconds)) s: \(after ?? keptExplanation(outcome) ?? "validated, not activated")
          \(report.windowsCommitted) windows committed, \(report.windowFailures) failed, \
        \(report.reconnects) reconnects, \(report.bytesSent) bytes sent for \(size) (\(report.bytesResent) resent)
          \(report.bytesOnAir) bytes on air (\(modeDescription(report.transferMode)))
          goodput \(String(format: "%.1f", goodput / 1000)) kB/s\(raw.map { String(format: " = %.0f%% of the link's %.1f kB/s", 100 * goodput / $0, $0 / 1000) } ?? "")\(ceiling.map { String(format: ", %.0f%% of the air's %.1f kB/s", 100 * goodput / $0, $0 / 1000) } ?? "")\(transferGoodput.map { String(format: "\n  transfer (PREPARE to VALIDATE's answer) %.2f s, %.1f kB/s", transferSeconds ?? 0, $0 / 1000) } ?? "")
        """)
    case .activationKept(let kept, let report):
      // Deferred: the image is validated and kept, not activated yet (exit code 16), not a failure.
      if style == .json {
        emit(
          PushReport.failed(
            .init(
              exitCode: Int(kept.exitCode), error: kept.explanation, seconds: seconds,
              resumedFrom: report.resumedFrom.map { Int($0) }, lastOutcome: .init(nil),
              activation: PushReport.Activation(outcome))))
        return
      }
      line("validated in \(String(format: "%.2f", seconds)) s, not activated yet: \(kept.explanation)")
    case .failed(let failure, let report):
      if style == .json {
        emit(
          PushReport.failed(
            .init(
              exitCode: Int(failure.exitCode), error: failure.explanation(device: report.deviceBefore),
              seconds: seconds, resumedFrom: report.resumedFrom.map { Int($0) },
              lastOutcome: .init(report.deviceAfter.map { PushReport.Outcome($0.lastOutcome) }),
              activation: PushReport.Activation(outcome))))
        return
      }
      FileHandle.standardError.write(
        Data(
          "otactl: \(device.map { "\($0): " } ?? "")\(failure.explanation(device: report.deviceBefore))\n"
            .utf8))
    }
  }

  /// A scheduled activation's sentence, for the closing line.
  private func keptExplanation(_ outcome: SenderOutcome) -> String? {
    guard case .activationKept(let kept, _) = outcome else { return nil }
    return kept.explanation
  }

  /// The transfer mode as the output names it.
  static func modeName(_ mode: TransferMode) -> String {
    switch mode {
    case .plain: "plain"
    case .compressed: "compressed"
    case .delta: "delta"
    case .blockHashes: "block copies"
    }
  }

  private func modeDescription(_ mode: TransferMode) -> String {
    if case .delta(let base) = mode, base < baseNames.count { return "delta against \(baseNames[base])" }
    return Self.modeName(mode)
  }

  /// What `push --dry-run` found: what the device runs and what a push would send.
  private func dryRunSummary(_ report: SenderReport, size: Int) -> String {
    let running = report.deviceBefore.map {
      "the device runs \($0.runningVersion) (\($0.runningImageSize) bytes, CRC32 "
        + String(format: "%08x", $0.runningImageCRC) + ")"
    }
    let choice =
      switch report.transferMode {
      case .plain where report.plannedBytesOnAir == 0:
        "plain chunks (the device takes no data operations, or --full)"
      case .plain: "plain chunks: operations would not send fewer bytes"
      case .compressed: "compressed operations: no base matches the running image"
      case .delta(let base):
        "a delta against \(base < baseNames.count ? baseNames[base] : "base #\(base + 1)")"
      case .blockHashes:
        "copies of the blocks the device has (\(report.blockHashesRead) hashes of "
          + "\(report.blockSize)-byte blocks), the rest compressed"
      }
    var planned = report.plannedBytesOnAir > 0 ? "\(report.plannedBytesOnAir) bytes as operations, " : ""
    if report.plannedFrameBytesOnAir > 0 {
      planned = "\(report.plannedFrameBytesOnAir) bytes as zstd frames (\(planned)if the device took none), "
    }
    return """
      dry run, nothing sent: \(running ?? "no Info")
        a push of \(size) image bytes would send \(choice)
        \(planned)\(report.plainBytesOnAir) as plain chunks
      """
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  private var elapsedSeconds: Double {
    let elapsed = clock.now - started
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  }

  private func drawBar(_ progress: SenderProgress, fraction: Double, seconds: Double) {
    let now = clock.now
    if let lastDraw, now - lastDraw < .milliseconds(100), progress.committed < progress.total { return }
    lastDraw = now
    let width = 30
    let filled = Int(fraction * Double(width))
    let rate = Double(progress.committed) / max(seconds, 0.001)
    let remaining = rate > 0 ? Double(progress.total - progress.committed) / rate : 0
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    let text = String(
      format: "\r[%@] %3d%%  %.1f/%.1f kB  %.1f kB/s  ETA %.0fs  %@ ", bar, Int(fraction * 100),
      Double(progress.committed) / 1000, Double(progress.total) / 1000, rate / 1000, remaining,
      progress.phase.rawValue)
    FileHandle.standardError.write(Data(text.utf8))
  }

  private func clearBar() {
    if style == .terminal, lastDraw != nil {
      FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
      lastDraw = nil
    }
  }

  private func line(_ text: String) {
    clearBar()
    let prefixed = device.map { device in
      text.split(separator: "\n", omittingEmptySubsequences: false).map { "\(device): \($0)" }
        .joined(separator: "\n")
    }
    FileHandle.standardOutput.write(Data(((prefixed ?? text) + "\n").utf8))
  }

  /// A JSON line, with this reporter's device when it has one.
  private func emit(_ report: PushReport) {
    if let device {
      JSONOutput.line(FleetReport.Tagged(device: device, line: report))
    } else {
      JSONOutput.line(report)
    }
  }
}
