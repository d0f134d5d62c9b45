import ArgumentParser
import Foundation
import OTACentral
import OTALink
import OTASender
import OTAWire

/// `activate`: activate the image already validated on the device, now (ACTIVATE) or in a window
/// (SCHEDULE), and say what the device answered: activated (then, unless --no-wait, the version
/// it runs after its restart), scheduled, deferred or declined, with push's exit codes.
struct ActivateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "activate",
    abstract: "Activate the image validated on the device: now, at a time, or in a window.",
    discussion: """
      For an image pushed with --no-activate, or one whose activation the device deferred. The
      device may defer it again (exit code 16: it keeps the activation and carries it out itself
      once nothing holds it) or its owner may decline it (exit code 17: the image is dropped).
      """)

  @OptionGroup var device: DeviceOptions

  @Flag(help: "Activate for good, without a trial boot.")
  var permanent = false

  @Option(
    help: ArgumentHelp(
      "Leave the activation to the device from this time on (SCHEDULE): 2026-11-30T02:00:00Z, 2026-11-30T02:00 (local time), +2h, +30m.",
      valueName: "time"),
    transform: ScheduleOptions.time)
  var at: ActivationTime?

  @Option(
    help: ArgumentHelp("With --at: the end of the window.", valueName: "time"),
    transform: ScheduleOptions.time)
  var until: ActivationTime?

  @Option(
    help: ArgumentHelp(
      "Leave the activation to the device in the next daily window that has not ended (SCHEDULE): HH:MM-HH:MM local time, or with Z in UTC.",
      valueName: "HH:MM-HH:MM"),
    transform: ScheduleOptions.window)
  var window: DailyWindow?

  @Flag(name: .customLong("no-wait"), help: "Once activated, do not wait for the device to come back.")
  var noWait = false

  @Option(
    name: .customLong("restart-timeout"),
    help: "Seconds to wait for the device to come back after ACTIVATE's restart (default 60).")
  var restartTimeout = 60.0

  func validate() throws {
    _ = try ScheduleOptions.schedule(at: at, until: until, window: window, atFlag: "--at")
    try OptionChecks.seconds(restartTimeout, "--restart-timeout", maximum: 24 * 3600)
  }

  func run() throws {
    let window = try ScheduleOptions.schedule(at: at, until: until, window: window, atFlag: "--at").map {
      try ScheduleOptions.resolve($0, permanent: permanent)
    }
    var refusal: ActivateRequest.Refusal?
    var sent: Request?
    let choose = { (info: InfoRecord) -> Request? in
      switch ActivateRequest.request(for: info, window: window, permanent: permanent) {
      case .success(let request):
        sent = request
        return request
      case .failure(let why):
        refusal = why
        return nil
      }
    }
    let result = try talk(device) {
      (link: any CentralLink, timeout: Duration) -> Result<
        (info: InfoRecord, answer: Response?), CommandSession.Failure
      > in
      // ACTIVATE's restart may close the link before its answer gets out: Info then tells.
      switch CommandSession.run(link: link, request: choose, timeout: timeout) {
      case .failure(.droppedAfterRequest(let info, _)): .success((info, nil))
      case let other: other
      }
    }
    if let refusal {
      say(ok: false, result: "refused", refusal.explanation, exit: refusal.exitStatus)
      throw ExitCode(refusal.exitStatus)
    }
    guard let sent else { throw ExitCode(.refused) }
    guard let answer = result.answer else {
      guard case .activate = sent else {
        let message =
          "the link dropped before the device answered \(sent.opcode); otactl info shows whether it keeps the activation"
        say(ok: false, result: "refused", message, exit: .timedOut)
        throw ExitCode(.timedOut)
      }
      // No answer to ACTIVATE: the restart, or a lost request. Info after it says which.
      try waitForRestart(into: result.info.transferVersion, before: result.info, answered: false)
      return
    }
    let ending = ActivateRequest.ending(of: sent, answer: answer, info: result.info)
    if case .activated(let version) = ending, !noWait {
      try waitForRestart(into: version, before: result.info, answered: true)
      return
    }
    say(
      ok: ending.exitStatus == .success, result: Self.name(ending), ending.explanation,
      exit: ending.exitStatus,
      activation: Self.activation(ending))
    if ending.exitStatus != .success { throw ExitCode(ending.exitStatus) }
  }

  /// After ACTIVATE: Info again once the device is back, until it runs `version` or the time is up.
  private func waitForRestart(into version: Version, before: InfoRecord, answered: Bool) throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int64(restartTimeout * 1000))
    if !device.json {
      print(
        answered
          ? "activated: the device restarts into \(version)"
          : "ACTIVATE sent; the link dropped before its answer (the device restarting?): Info tells once it is back"
      )
    }
    // Give the device a moment to go: an Info read before its restart shows it unchanged.
    Thread.sleep(forTimeInterval: 0.5)
    while clock.now < deadline {
      let link = try device.openLink()
      if case .success(let read) = CommandSession.run(link: link, request: nil, timeout: .seconds(5)),
        read.info.state != .activating
      {
        let info = read.info
        let onTrial = info.flags.contains(.runningOnTrial)
        if info.runningVersion == version {
          let message =
            "the device runs \(version) from slot \(info.runningSlot)"
            + (onTrial ? " on trial: its health check decides (or otactl confirm)" : ", confirmed")
          say(ok: true, result: "activated", message, exit: .success, runningVersion: "\(version)")
          return
        }
        if info.runningSlot == before.runningSlot, info.lastOutcome.result != .rolledBack {
          Thread.sleep(forTimeInterval: 0.5)
          continue  // not restarted yet
        }
        let failure: PushFailure =
          info.lastOutcome.result == .rolledBack && info.lastOutcome.to == version
          ? .rolledBack(running: info.runningVersion, reason: info.lastOutcome.reason)
          : .wrongVersionAfterRestart(expected: version, running: info.runningVersion)
        say(ok: false, result: "activated", failure.explanation, exit: failure.exitStatus)
        throw ExitCode(failure.exitStatus)
      }
      Thread.sleep(forTimeInterval: 0.5)
    }
    let failure = PushFailure.timedOut(.restarting)
    say(ok: false, result: "activated", failure.explanation, exit: failure.exitStatus)
    throw ExitCode(failure.exitStatus)
  }

  private func say(
    ok: Bool, result: String, _ message: String, exit: OtactlExitCode,
    activation: PushReportActivation? = nil,
    runningVersion: String? = nil
  ) {
    if device.json {
      JSONOutput.document(
        ActivateJSON(
          ok: ok, result: result, exitCode: Int(exit.rawValue), message: message, activation: activation,
          runningVersion: runningVersion))
    } else if ok || exit == .activationKept {
      print(message)
    } else {
      FileHandle.standardError.write(Data("otactl: \(message)\n".utf8))
    }
  }

  static func name(_ ending: ActivateRequest.Ending) -> String {
    switch ending {
    case .activated: "activated"
    case .kept(.deferred): "deferred"
    case .kept(.scheduled): "scheduled"
    case .failed(.declined): "declined"
    case .failed: "refused"
    }
  }

  static func activation(_ ending: ActivateRequest.Ending) -> PushReportActivation? {
    switch ending {
    case .kept(let kept): PushReportActivation(.activationKept(kept, SenderReport()))
    case .failed(.declined): PushReportActivation(result: "declined", kept: false)
    case .activated, .failed: nil
    }
  }
}
