import Foundation
import OTAGateway
import OTASystem

/// Where the gateway keeps its `TargetBindings`: `<state>/bindings.json`, replaced durably (a power
/// cut leaves the old bindings or the new, never none), mode 0600. A file that cannot be read is
/// refused rather than taken as empty: starting over would bind every serial again to whichever
/// device answers it first.
public struct BindingStore: Sendable {
  public enum Failure: Error, Sendable, CustomStringConvertible {
    case unreadable(String, reason: String)
    case unwritable(String, reason: String)

    public var description: String {
      switch self {
      case .unreadable(let path, let reason):
        "the bindings of serials to Bluetooth identities in \(path) cannot be read (\(reason)): move the "
          + "file away to bind every serial again to the first device that says it"
      case .unwritable(let path, let reason):
        "the bindings of serials to Bluetooth identities cannot be saved in \(path) (\(reason))"
      }
    }
  }

  public let path: String

  public init(directory: String) { path = "\(directory)/bindings.json" }

  public func load() throws(Failure) -> TargetBindings {
    let bytes: [UInt8]?
    do {
      bytes = try FileSystem.readFileIfPresent(path)
    } catch {
      throw .unreadable(path, reason: error.description)
    }
    guard let bytes else { return TargetBindings() }
    do {
      return TargetBindings(
        bindings: try JSONDecoder().decode([String: TargetBindings.Binding].self, from: Data(bytes)))
    } catch {
      throw .unreadable(path, reason: "not the bindings' JSON")
    }
  }

  public func save(_ bindings: TargetBindings) throws(Failure) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
    do {
      try PrivateFile.replace(path, with: Array(try encoder.encode(bindings.bindings)))
    } catch {
      throw .unwritable(path, reason: "\(error)")
    }
  }
}
