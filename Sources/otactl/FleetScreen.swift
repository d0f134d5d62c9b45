import Foundation
import OTASender

/// Several devices' pushes on a terminal: one line each, redrawn in place on standard error (at
/// most ten times a second, and at every phase change and end), so that every device shows at once.
final class FleetScreen {
  private struct Row {
    var phase = "waiting"
    var committed: UInt32 = 0
    var total: UInt32 = 0
    var started: ContinuousClock.Instant?
    var resumedFrom: UInt32?
    var ending: String?
  }

  private let names: [String]
  private let nameWidth: Int
  private var rows: [Row]
  private let clock = ContinuousClock()
  private var lastDraw: ContinuousClock.Instant?
  private var drawnLines = 0

  init(devices: [String]) {
    names = devices
    nameWidth = min(32, devices.map(\.count).max() ?? 0)
    rows = Array(repeating: Row(), count: devices.count)
  }

  func started(_ index: Int) {
    rows[index].started = clock.now
    rows[index].phase = "connecting"
    draw(force: true)
  }

  func update(_ index: Int, _ progress: SenderProgress, _ report: SenderReport) {
    let phaseChanged = rows[index].phase != progress.phase.rawValue
    rows[index].phase = progress.phase.rawValue
    if progress.total > 0 {
      rows[index].committed = progress.committed
      rows[index].total = progress.total
    }
    if let offset = report.resumedFrom.last, offset > 0 { rows[index].resumedFrom = offset }
    draw(force: phaseChanged)
  }

  func ended(_ index: Int, _ text: String) {
    rows[index].ending = text
    draw(force: true)
  }

  /// The last drawing stays on the screen; what follows goes below it.
  func close() { draw(force: true) }

  private func draw(force: Bool) {
    let now = clock.now
    if !force, let lastDraw, now - lastDraw < .milliseconds(100) { return }
    lastDraw = now
    var text = drawnLines > 0 ? "\u{1B}[\(drawnLines)A" : ""
    // A line longer than the terminal would wrap onto two rows, and the next redraw would go up
    // too few: each line is cut to the width.
    let width = Self.terminalWidth()
    for (name, row) in zip(names, rows) {
      let line = describe(name, row, now: now)
      text += "\r\u{1B}[K" + (line.count < width ? line : String(line.prefix(width - 2)) + "…") + "\n"
    }
    drawnLines = rows.count
    FileHandle.standardError.write(Data(text.utf8))
  }

  /// Standard error's terminal's columns (80 when it does not say).
  private static func terminalWidth() -> Int {
    var size = winsize()
    guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 10 else { return 80 }
    return Int(size.ws_col)
  }

  private func describe(_ name: String, _ row: Row, now: ContinuousClock.Instant) -> String {
    let label = name.count > nameWidth ? String(name.prefix(nameWidth - 1)) + "…" : name
    let padded = label + String(repeating: " ", count: max(0, nameWidth - label.count))
    if let ending = row.ending { return "\(padded)  \(ending)" }
    guard row.total > 0 else { return "\(padded)  \(row.phase)" }
    let fraction = Double(row.committed) / Double(row.total)
    let width = 20
    let filled = min(width, Int(fraction * Double(width)))
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    let seconds = row.started.map { ProgressReporter.seconds(now - $0) } ?? 0
    let rate = Double(row.committed) / max(seconds, 0.001) / 1000
    let resumed = row.resumedFrom.map { "  resumed at \($0)" } ?? ""
    return String(format: "%@  [%@] %3d%%  %6.1f kB/s  %@", padded, bar, Int(fraction * 100), rate, row.phase)
      + resumed
  }
}
