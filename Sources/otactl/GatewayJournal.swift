import Foundation
import OTASystem

/// The actions the gateway began pushing and has not yet closed on the server, by controller id,
/// kept durably in `<state>/actions.json`. After a kill, a restarted gateway knows that a device's
/// rollback from the action's version is this action's result (to report), not an older one.
final class GatewayJournal {
  let path: String
  private(set) var started: [String: String]

  init(directory: String) throws {
    path = "\(directory)/actions.json"
    if let bytes = try FileSystem.readFileIfPresent(path),
      let decoded = try? JSONDecoder().decode([String: String].self, from: Data(bytes))
    {
      started = decoded
    } else {
      // Missing or damaged: no action is known to have begun, so none is reported from the
      // device's past; a device is then pushed again, which resumes or ends at once.
      started = [:]
    }
  }

  func began(_ actionId: String, on controllerId: String) throws {
    guard started[controllerId] != actionId else { return }
    started[controllerId] = actionId
    try save()
  }

  func closed(on controllerId: String) throws {
    guard started.removeValue(forKey: controllerId) != nil else { return }
    try save()
  }

  private func save() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    try DurableWrite.replace(path, with: Array(try encoder.encode(started)), mode: 0o600)
  }
}
