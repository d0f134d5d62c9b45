import Foundation

/// The repository's root folder, found from this file's place in it
/// (Sources/OTATestSupport/RepositoryRoot.swift): tests read docs, images and the built executables
/// from there.
public enum RepositoryRoot {
  public static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()

  /// A file or folder under the root, by its path relative to it ("docs/PROTOCOL.md").
  public static func url(_ relativePath: String) -> URL { url.appendingPathComponent(relativePath) }

  /// The text of a file under the root.
  public static func text(_ relativePath: String) throws -> String {
    try String(contentsOf: url(relativePath), encoding: .utf8)
  }

  /// The bytes of a file under the root.
  public static func bytes(_ relativePath: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url(relativePath)))
  }
}
