import Crypto
import OTAGateway
import OTASystem
import OTAWire

/// The gateway's downloads, one file per artifact named by its hash: `<algorithm>-<hash>.swu` once
/// whole and checked, `<algorithm>-<hash>.part` while it arrives. A download that stops (the
/// gateway killed, the server gone) goes on from the partial file's end with a Range request. The
/// same artifact for many devices, or offered again after a restart, is fetched once.
public struct ArtifactCache: Sendable {
  public let directory: String

  public init(directory: String) throws(SystemError) {
    self.directory = directory
    try FileSystem.makeDirectories(directory)
  }

  public func path(_ reference: ArtifactReference) -> String { "\(directory)/\(reference.key).swu" }
  public func partialPath(_ reference: ArtifactReference) -> String { "\(directory)/\(reference.key).part" }

  /// What a fetch did, for the log and the figures.
  public struct Fetch: Sendable {
    public var bytes: [UInt8]
    /// Bytes this fetch received from the server (0: the cache had it).
    public var downloaded: Int
    /// Where the download went on from (0: from the start).
    public var resumedFrom: Int
  }

  /// The artifact's bytes, from the cache or the server, checked against the reference's size and
  /// hash. A wrong hash or a short file is refused and not kept.
  public func fetch(_ reference: ArtifactReference, client: DDIClient, for controllerId: String) throws
    -> Fetch
  {
    let whole = path(reference)
    if let bytes = try FileSystem.readFileIfPresent(whole) {
      if bytes.count == reference.size, Self.digest(bytes, reference.algorithm) == reference.hash {
        return Fetch(bytes: bytes, downloaded: 0, resumedFrom: 0)
      }
      try FileSystem.unlinkIfPresent(whole)
    }
    let partial = partialPath(reference)
    let file = try FileDescriptor.open(partial, [.readWrite, .create], mode: 0o600)
    defer { try? file.close() }
    var offset = Int(try file.endOffset())
    if offset >= reference.size {
      try file.truncate(to: 0)
      offset = 0
    }
    var received = 0
    var writeError: (any Error)?
    let headers = client.downloadHeaders(reference.url, for: controllerId)
    func run(from start: Int) throws(HTTPFailure) -> Int {
      var position = start
      let result = try client.http.download(
        reference.url, headers: headers, from: start, limit: reference.size - start
      ) { chunk in
        do {
          _ = try file.write(chunk, at: UInt64(position))
          position += chunk.count
          return true
        } catch {
          writeError = error
          return false
        }
      }
      received += result.received
      return result.status
    }
    var status: Int
    do {
      status = try run(from: offset)
    } catch {
      if let writeError { throw writeError }
      // A server that cannot resume: start again from the first byte, once.
      guard offset > 0, error.reason.lowercased().contains("range") else { throw error }
      try file.truncate(to: 0)
      offset = 0
      status = try run(from: 0)
    }
    guard status == 200 || status == 206 else {
      try file.truncate(to: 0)
      throw GatewayRefusal.download("HTTP \(status) for \(reference.url)")
    }
    try file.sync()
    let bytes = try file.read(at: 0, count: Int(try file.endOffset()))
    guard bytes.count == reference.size else {
      throw GatewayRefusal.download(
        "\(reference.filename) ended after \(bytes.count) of \(reference.size) bytes (kept to resume)")
    }
    let digest = Self.digest(bytes, reference.algorithm)
    guard digest == reference.hash else {
      try FileSystem.unlinkIfPresent(partial)
      throw GatewayRefusal.download(
        "\(reference.filename) has \(reference.algorithm.rawValue) \(digest), the server said \(reference.hash) "
          + "(deleted)")
    }
    try DurableWrite.rename(partial, to: whole)
    return Fetch(bytes: bytes, downloaded: received, resumedFrom: offset)
  }

  /// Removes downloads no deployment uses now: whole artifacts beyond the newest `keeping` (and
  /// never one in `inUse`), and partial ones a week old. A gateway that runs for years keeps a few
  /// releases, not every one.
  public func prune(keeping: Int, inUse: Set<String>) throws(SystemError) {
    var whole: [(name: String, modified: Int64)] = []
    let weekAgo = Int64(ProcessEnvironment.wallClockMicroseconds) * 1000 - 7 * 24 * 3600 * 1_000_000_000
    for name in try FileSystem.directoryEntries(directory) {
      let path = "\(directory)/\(name)"
      guard let status = try FileSystem.status(ofPath: path) else { continue }
      let key = String(name.split(separator: ".").first ?? "")
      if name.hasSuffix(".swu"), !inUse.contains(key) {
        whole.append((name, status.modified))
      } else if name.hasSuffix(".part"), !inUse.contains(key), status.modified < weekAgo {
        try FileSystem.unlinkIfPresent(path)
      }
    }
    for old in whole.sorted(by: { $0.modified > $1.modified }).dropFirst(keeping) {
      try FileSystem.unlinkIfPresent("\(directory)/\(old.name)")
    }
  }

  static func digest(_ bytes: [UInt8], _ algorithm: ArtifactReference.Algorithm) -> String {
    switch algorithm {
    case .sha256: Hex.string(SHA256.hash(data: bytes))
    case .sha1: Hex.string(Insecure.SHA1.hash(data: bytes))
    }
  }
}
