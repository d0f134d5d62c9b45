import Foundation
import OTASystem

/// The device's say (docs/OTAD.md, "The device has a say") as the page's buttons use it: an update
/// lock in the device's lock directory, held in the name of ota-lab's own process (alive while the
/// lab runs, so otad counts it), and the owner's answer given with `otad consent`, the command a
/// device's application or its owner would run.
extension LabDevice {
  static let lockReason = "the lab's device is busy printing"

  /// Writes the lab's lock file (`pid=`, `reason=`), whole or not at all: written beside it under a
  /// name otad skips (a leading dot), then renamed over it.
  func holdLock() throws -> String {
    let pid = ProcessInfo.processInfo.processIdentifier
    let staging = paths.lockDirectory + "/.lab.lock.new"
    try FileSystem.writeFile(staging, Array("pid=\(pid)\nreason=\(Self.lockReason)\n".utf8))
    try FileSystem.rename(staging, to: paths.labLock)
    return "holding an update lock: locks/lab.lock says pid=\(pid) (ota-lab), reason=\(Self.lockReason);"
      + " the device still receives and checks an image, but keeps its activation"
  }

  func releaseLock() throws -> String {
    guard FileSystem.exists(paths.labLock) else { throw LabError("the lab holds no update lock") }
    try FileSystem.unlinkIfPresent(paths.labLock)
    return "released the update lock (removed locks/lab.lock): a kept activation goes ahead within a second"
  }

  /// `otad consent DECISION [more]` on the device's storage; what it printed, or why it refused.
  func consent(_ decision: String, _ more: [String] = []) throws -> String {
    let arguments =
      ["consent", decision] + more + (board == nil ? [] : ["--config", paths.otadConfiguration]) + [
        "--slot-a", paths.slotA, "--slot-b", paths.slotB, "--capacity", capacity, "--state-dir", paths.state,
        "--trusted-key", paths.trustedKey, "--decryption-key", paths.deviceKey,
      ]
    let output = paths.folder + "/otad-consent.log"
    let child = try LabProcess(paths.otad, arguments, output: output)
    let deadline = Date().addingTimeInterval(20)
    while child.ended() == nil, Date() < deadline { usleep(20_000) }
    if child.ended() == nil { child.kill() }
    let said = ((try? FileSystem.readFile(output)).map { String(decoding: $0, as: UTF8.self) } ?? "")
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let command = "otad consent " + ([decision] + more).joined(separator: " ")
    guard child.ended() == .exited(0) else {
      // ArgumentParser's refusal is its "Error: ..." line; the usage lines after it say nothing here.
      let why = said.split(separator: "\n").first { $0.hasPrefix("Error: ") }.map { String($0.dropFirst(7)) }
      throw LabError("\(command) refused: " + (why ?? (said.isEmpty ? "no answer" : said)))
    }
    return "\(command): \(said)"
  }
}
