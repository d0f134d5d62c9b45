import Foundation
import OTABoot
import OTALab
import OTASystem
import Synchronization

/// Looks at the U-Boot board every 50 ms while the device lives, on a thread of its own, and keeps
/// what changed (`UBootHistory`): the page asks three times a second, and a boot with otad's
/// confirmation after it can pass between two of its looks. fw_printenv runs only when the flash
/// file changed (otad's fw_setenv or U-Boot's saveenv wrote it).
final class LabUBootWatcher: Sendable {
  let board: LabUBootBoard
  private let history = Mutex(UBootHistory())
  /// The environment as fw_printenv last read it (nil before the first look): the panel's reading,
  /// so that a snapshot spawns no fw_printenv of its own.
  private let reading = Mutex<Result<[String: String], UBootXray.EnvironmentUnreadable>?>(nil)
  private let stopped = Mutex(false)
  private let made = ContinuousClock.now

  init(board: LabUBootBoard) { self.board = board }

  func start() {
    Thread.detachNewThread { [self] in
      var seen: FlashStamp?
      while !stopped.withLock({ $0 }) {
        look(since: &seen)
        Thread.sleep(forTimeInterval: 0.05)
      }
    }
  }

  func stop() { stopped.withLock { $0 = true } }

  var lines: [String] { history.withLock { $0.lines } }

  var environment: Result<[String: String], UBootXray.EnvironmentUnreadable>? { reading.withLock { $0 } }

  struct FlashStamp: Equatable {
    var modified: Int64
    var size: UInt64
  }

  private func look(since seen: inout FlashStamp?) {
    var environment: [String: String]?
    if let status = (try? FileSystem.status(ofPath: board.folder + "/flash1.img")) ?? nil {
      let stamp = FlashStamp(modified: status.modified, size: status.size)
      if stamp != seen {
        do {
          let text = try ToolRunner(timeout: .seconds(5)).runText("fw_printenv", ["-c", board.config])
          environment = VariableListing.parse(text)
          seen = stamp
        } catch {
          // Unreadable (U-Boot's saveenv half done): said so, and looked at again on the next pass.
          reading.withLock { $0 = .failure(UBootXray.EnvironmentUnreadable("\(error)")) }
        }
        if let environment { reading.withLock { $0 = .success(environment) } }
      }
    }
    let elapsed = (ContinuousClock.now - made).components
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    let poweredOn = board.poweredOn()
    let lastBoot = board.boots().last
    history.withLock {
      $0.observe(at: seconds, environment: environment, poweredOn: poweredOn, lastBoot: lastBoot)
    }
  }
}
