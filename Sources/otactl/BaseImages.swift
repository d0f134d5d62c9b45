import ArgumentParser
import OTASender
import OTASystem

/// `push --base`: one earlier release, or every regular file in a directory of them.
enum BaseImages {
  static func load(_ path: String) throws -> [BaseImage] {
    guard let kind = (try? FileSystem.kind(ofPath: path)) ?? nil else {
      throw ValidationError("--base \(path): no such file or directory")
    }
    let files: [String]
    if kind == .directory {
      let names = (try? FileSystem.directoryEntries(path)) ?? []
      files = names.map { path.hasSuffix("/") ? path + $0 : path + "/" + $0 }
    } else {
      files = [path]
    }
    var bases: [BaseImage] = []
    for file in files {
      guard let kind = (try? FileSystem.kind(ofPath: file)) ?? nil, kind != .directory,
        let bytes = try? FileSystem.readFile(file), !bytes.isEmpty
      else { continue }
      bases.append(BaseImage(bytes: bytes, name: file))
    }
    guard !bases.isEmpty else { throw ValidationError("--base \(path): no readable, non-empty file there") }
    return bases
  }
}
