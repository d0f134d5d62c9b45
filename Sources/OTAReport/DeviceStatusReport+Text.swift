import OTAWire

extension DeviceStatusReport {
  /// The report as `otad status` prints it without `--json`, one string per line.
  public var lines: [String] {
    var lines = ["running: slot \(running)\(onTrial ? " (on trial)" : " (confirmed)")"]
    if let runningImage { lines.append("running image: \(runningImage)") }
    for slot in slots {
      let content = slot.version.map { "firmware \($0), \(slot.status)" } ?? "no image"
      lines.append(
        "  \(slot.running ? "▶" : " ") slot \(slot.slot): \(content)  (\(slot.path), \(slot.capacity) bytes)")
    }
    if let trial {
      lines.append(
        "trial: slot \(trial.slot), \(trial.attemptsUsed) of \(trial.attemptsAllowed) boot(s) used"
          + (trial.begun ? "" : " (armed: it runs at the next start)"))
    }
    lines.append("last update: \(lastOutcome.summary)")
    lines.append(
      "trust: "
        + (trustedKeys.isEmpty
          ? "no signature required" : "signed by one of \(trustedKeys.joined(separator: ", "))")
        + "; downgrades \(downgradesAllowed ? "allowed" : "refused"); security counter floor \(securityFloor)"
        + "; encrypted images "
        + (decryptionKey.map { "decrypted with \($0)" } ?? "refused (no decryption key)")
    )
    lines += bootStateLines
    lines.append(transferLine)
    lines += activation?.lines ?? []
    return lines
  }

  private var bootStateLines: [String] {
    if let rebuilt {
      var lines = ["boot state: REBUILT from evidence (\(bootState == "missing" ? "missing" : "unusable"))"]
      lines += rebuilt.findings.map { "  \($0)" }
      if !rebuilt.certain {
        lines.append(
          "  updates are refused until slot \(rebuilt.kept) is confirmed: its health check (as for a "
            + "trial), a paired central's CONFIRM, or `otad mark-good` after you check it runs the right firmware"
        )
      }
      return lines
    }
    switch bootState {
    case "damaged": return ["boot state: damaged (it will be moved aside at the next start)"]
    case "missing": return ["boot state: none yet (a factory device)"]
    default: return []
    }
  }

  private var transferLine: String {
    switch transfer {
    case .missing: "transfer: none"
    case .damaged: "transfer: journal damaged (it will be moved aside at the next start)"
    case .journal(let journal):
      "transfer: \(journal.state) firmware \(journal.version) into slot \(journal.slot): "
        + "\(journal.committed) of \(journal.size) bytes committed (\(journal.percent)%)"
    }
  }
}

extension DeviceStatusReport.Outcome {
  /// `none`, `FROM → TO succeeded (N trial boot(s))` or `FROM → TO rolled back: REASON, after N boot(s)`.
  public var summary: String {
    switch result {
    case "\(UpdateOutcome.Result.succeeded)": "\(from) → \(to) succeeded (\(attemptsUsed) trial boot(s))"
    case "\(UpdateOutcome.Result.rolledBack)":
      "\(from) → \(to) rolled back: \(reason), after \(attemptsUsed) boot(s)"
    default: "none"
    }
  }
}
