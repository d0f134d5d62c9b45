import OTASystem

extension ArtifactCache {
  /// Removes downloads no deployment uses now: whole artifacts beyond the newest `keeping` (and
  /// never one in `inUse`); partial ones older than `limits.maxPartialAge`, then the oldest while
  /// all partial files together hold more than `limits.maxPartialBytes`. A gateway that runs for
  /// years keeps a few releases, not every one, and a server that offers ever new artifacts whose
  /// downloads break off cannot fill its disk. `now`: nanoseconds since 1970.
  public func prune(keeping: Int, inUse: Set<String>, now: Int64? = nil) throws(SystemError) {
    let now = now ?? Int64(ProcessEnvironment.wallClockMicroseconds) * 1000
    let (seconds, attoseconds) = limits.maxPartialAge.components
    let oldest = now - seconds * 1_000_000_000 - attoseconds / 1_000_000_000
    var whole: [(name: String, modified: Int64)] = []
    var partial: [(name: String, modified: Int64, size: Int)] = []
    var partialBytes = 0
    for name in try FileSystem.directoryEntries(directory) {
      let path = "\(directory)/\(name)"
      guard let status = try FileSystem.status(ofPath: path) else { continue }
      let key = String(name.split(separator: ".").first ?? "")
      if name.hasSuffix(".swu"), !inUse.contains(key) {
        whole.append((name, status.modified))
      } else if name.hasSuffix(".part") {
        if !inUse.contains(key), status.modified < oldest {
          try FileSystem.unlinkIfPresent(path)
          continue
        }
        partialBytes += Int(status.size)
        if !inUse.contains(key) { partial.append((name, status.modified, Int(status.size))) }
      }
    }
    for old in whole.sorted(by: { $0.modified > $1.modified }).dropFirst(keeping) {
      try FileSystem.unlinkIfPresent("\(directory)/\(old.name)")
    }
    for old in partial.sorted(by: { $0.modified < $1.modified }) where partialBytes > limits.maxPartialBytes {
      try FileSystem.unlinkIfPresent("\(directory)/\(old.name)")
      partialBytes -= old.size
    }
  }
}
