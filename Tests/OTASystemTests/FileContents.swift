import Foundation

/// The file's bytes, or nil.
func contents(_ path: String) -> [UInt8]? {
  FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}
