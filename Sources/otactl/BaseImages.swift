import ArgumentParser
import Foundation
import OTASender

/// `push --base`: one earlier release, or every regular file in a directory of them.
enum BaseImages {
  static func load(_ path: String) throws -> [BaseImage] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw ValidationError("--base \(path): no such file or directory")
    }
    let files: [String]
    if isDirectory.boolValue {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
      files = names.sorted().map { (path as NSString).appendingPathComponent($0) }
    } else {
      files = [path]
    }
    var bases: [BaseImage] = []
    for file in files {
      var fileIsDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: file, isDirectory: &fileIsDirectory),
        !fileIsDirectory.boolValue, let data = FileManager.default.contents(atPath: file), !data.isEmpty
      else { continue }
      bases.append(BaseImage(bytes: [UInt8](data), name: file))
    }
    guard !bases.isEmpty else { throw ValidationError("--base \(path): no readable, non-empty file there") }
    return bases
  }
}
