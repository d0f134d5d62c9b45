import Foundation

/// Runs `body` with a fresh directory that is removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
  let path = FileManager.default.temporaryDirectory.appendingPathComponent("otasystem-\(UUID().uuidString)")
    .path
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try body(path)
}

/// The file's bytes, or nil.
func contents(_ path: String) -> [UInt8]? {
  FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}
