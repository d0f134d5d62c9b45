import Foundation
import OTAGatewayHTTP
import OTASystem
import Synchronization

/// The actions the gateway began pushing and has not yet closed on the server, by controller id,
/// kept durably in `<state>/actions.json`. After a kill, a restarted gateway knows that a device's
/// rollback from the action's version is this action's result (to report), not an older one.
/// Written with O_EXCL|O_NOFOLLOW, mode 0600 (`PrivateFile`).
/// Closed from the feedback queue's thread as results are delivered, so it is locked.
final class GatewayJournal: Sendable {
  let path: String
  private let started: Mutex<[String: String]>

  init(directory: String) throws {
    path = "\(directory)/actions.json"
    var known: [String: String] = [:]
    if let bytes = try FileSystem.readFileIfPresent(path),
      let decoded = try? JSONDecoder().decode([String: String].self, from: Data(bytes))
    {
      known = decoded
    }
    // Missing or damaged: no action is known to have begun, so none is reported from the device's
    // past; a device is then pushed again, which resumes or ends at once.
    started = Mutex(known)
  }

  /// The action begun on `controllerId`, if any.
  func action(on controllerId: String) -> String? { started.withLock { $0[controllerId] } }

  func began(_ actionId: String, on controllerId: String) throws {
    try started.withLock { started in
      guard started[controllerId] != actionId else { return }
      started[controllerId] = actionId
      try save(started)
    }
  }

  func closed(on controllerId: String) throws {
    try started.withLock { started in
      guard started.removeValue(forKey: controllerId) != nil else { return }
      try save(started)
    }
  }

  private func save(_ started: [String: String]) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    try PrivateFile.replace(path, with: Array(try encoder.encode(started)))
  }
}
