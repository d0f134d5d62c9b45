import ArgumentParser
import Foundation
import OTASystem

/// The devices of one push: `--devices` files read, and the same device named twice refused (a
/// device takes one push at a time: two sessions to it would only refuse each other).
enum DeviceList {
  /// The devices a file names, one per line; blank lines and what follows '#' are left out.
  static func read(_ path: String) throws -> [String] {
    guard let bytes = try? FileSystem.readFile(path) else {
      throw ValidationError("--devices \(path): cannot read the file")
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw ValidationError("--devices \(path): not UTF-8 text")
    }
    return text.split(whereSeparator: \.isNewline).compactMap { line in
      let entry = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        .trimmingCharacters(in: .whitespaces)
      return entry.isEmpty ? nil : entry
    }
  }

  /// A usage error naming the first device given twice.
  static func refuseDuplicates(_ devices: [String]) throws {
    var seen: [String: String] = [:]
    for device in devices {
      let key = identity(device)
      if let first = seen[key] {
        let same = first == device ? "" : " (\(first) is the same device)"
        throw ValidationError(
          "\(device) is given twice\(same): a device takes one push at a time; name each device once")
      }
      seen[key] = device
    }
  }

  /// What makes two spellings one device: a socket's real path, an address in capitals, a name as
  /// it is.
  static func identity(_ device: String) -> String {
    if LinkOptions.isSimulated(device) {
      return "socket " + URL(fileURLWithPath: device).standardizedFileURL.resolvingSymlinksInPath().path
    }
    if device.count == 17, device.split(separator: ":").count == 6 { return "address " + device.uppercased() }
    return "name " + device
  }
}
