import Foundation
import OTACentral
import OTAReport

/// The summary of a push to several devices, as text: a line for the whole push, one per device.
struct FleetSummaryText {
  let summary: FleetReport.Summary

  init(_ summary: FleetReport.Summary) { self.summary = summary }

  var text: String {
    let failed = summary.total - summary.confirmed
    var head =
      "\(summary.confirmed) of \(summary.total) devices confirmed"
      + (failed > 0 ? ", \(failed) not" : "") + String(format: " in %.1f s", summary.seconds)
    if let aggregate = summary.aggregateGoodput.value {
      head += String(
        format: "; together %.1f kB/s with up to %d links at once", aggregate / 1000, summary.parallel)
      if let capacity = summary.aggregateCapacity.value {
        head += String(
          format: " (%.0f%% of the %.1f kB/s one radio carries for them", 100 * aggregate / capacity,
          capacity / 1000)
        if let ceiling = summary.physicalCeiling.value {
          head += String(format: "; its physical ceiling %.1f kB/s", ceiling / 1000)
        }
        head += ")"
      }
    }
    let width = min(32, summary.devices.map(\.device.count).max() ?? 0)
    let lines = summary.devices.map { device in
      let name = device.device.padding(toLength: max(width, device.device.count), withPad: " ", startingAt: 0)
      guard device.ok else {
        return "  \(name)  \(Self.notOK(device.exitCode)) (exit \(device.exitCode)): "
          + (device.reason.value ?? "no reason given")
      }
      let rate = device.goodput.value.map { String(format: "  %.1f kB/s", $0 / 1000) } ?? ""
      let resumed = device.resumedFrom.filter { $0 > 0 }.map { "  resumed from byte \($0)" }.joined()
      return "  \(name)  \(device.runningVersion.value.map { "runs \($0)" } ?? "validated")"
        + (device.confirmed.value == true ? ", confirmed" : "") + rate + resumed
    }
    return ([head] + lines).joined(separator: "\n")
  }

  /// A device that did not end as asked: failed, or (exit 16) validated with the activation kept
  /// by the device, which is no failure.
  static func notOK(_ exitCode: Int) -> String {
    exitCode == Int(OtactlExitCode.activationKept.rawValue) ? "NOT ACTIVATED YET" : "FAILED"
  }
}
