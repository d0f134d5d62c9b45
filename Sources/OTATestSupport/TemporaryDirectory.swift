import Foundation

/// A fresh, empty folder under the system's temporary one, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
  public let url: URL
  public var path: String { url.path }

  /// Creates the folder; `label` starts its name, so that a leftover says which tests made it.
  public init(label: String = "blueota") throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
  }

  /// The path of `name` inside the folder.
  public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes `bytes` to `name` inside the folder and returns its path.
  @discardableResult
  public func write(_ bytes: [UInt8], _ name: String) throws -> String {
    try Data(bytes).write(to: url.appendingPathComponent(name))
    return path(name)
  }

  /// The bytes of `name` inside the folder.
  public func read(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url.appendingPathComponent(name)))
  }

  /// Removes the folder and everything in it.
  public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Runs `body` with the path of a fresh, empty folder that is removed afterwards, whatever happens.
public func withTemporaryDirectory<R>(label: String = "blueota", _ body: (String) throws -> R) throws -> R {
  let directory = try TemporaryDirectory(label: label)
  defer { directory.remove() }
  return try body(directory.path)
}
