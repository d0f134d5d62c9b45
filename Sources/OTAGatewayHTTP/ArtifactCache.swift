import OTAGateway
import OTASystem

/// The gateway's downloads, one file per artifact named by its hash: `<algorithm>-<hash>.swu` once
/// whole and checked, `<algorithm>-<hash>.part` while it arrives. A download goes to disk as it
/// arrives and is hashed on the way (never held whole in memory), at most the artifact's declared
/// size and never more than `Limits.maxArtifactBytes`. A download that stops (the gateway killed,
/// the server gone) goes on from the partial file's end with a Range request; partial files are
/// capped in age and in total bytes. The same artifact for many devices, or offered again after a
/// restart, is fetched once. Every file here is made with O_EXCL|O_NOFOLLOW, mode 0600
/// (`PrivateFile`).
public struct ArtifactCache: Sendable {
  /// What the cache takes and keeps.
  public struct Limits: Sendable, Equatable {
    /// The largest artifact downloaded: a deployment that declares more is refused before a byte
    /// is fetched (`otactl gateway --max-artifact-mib`).
    public var maxArtifactBytes: Int
    /// The partial downloads kept, in total: beyond it the oldest go first (`--max-partial-mib`).
    public var maxPartialBytes: Int
    /// A partial download older than this is removed (`--partial-max-age-hours`).
    public var maxPartialAge: Duration

    public init(
      maxArtifactBytes: Int = 1 << 30, maxPartialBytes: Int = 1 << 30,
      maxPartialAge: Duration = .seconds(3 * 24 * 3600)
    ) {
      self.maxArtifactBytes = maxArtifactBytes
      self.maxPartialBytes = maxPartialBytes
      self.maxPartialAge = maxPartialAge
    }
  }

  public let directory: String
  public let limits: Limits

  public init(directory: String, limits: Limits = Limits()) throws(SystemError) {
    self.directory = directory
    self.limits = limits
    try FileSystem.makeDirectories(directory)
  }

  public func path(_ reference: ArtifactReference) -> String { "\(directory)/\(reference.key).swu" }
  public func partialPath(_ reference: ArtifactReference) -> String { "\(directory)/\(reference.key).part" }

  /// What a fetch did, for the log and the figures.
  public struct Fetch: Sendable {
    /// The whole artifact, checked: `path(reference)`.
    public var path: String
    /// Bytes this fetch received from the server (0: the cache had it).
    public var downloaded: Int
    /// Where the download went on from (0: from the start).
    public var resumedFrom: Int

    /// The artifact's bytes (at most `Limits.maxArtifactBytes`), to open it.
    public func bytes() throws(SystemError) -> [UInt8] { try FileSystem.readFile(path) }
  }

  /// The artifact, from the cache or the server, checked against the reference's size and hash. A
  /// wrong hash is refused and not kept; a short download is kept to resume.
  public func fetch(_ reference: ArtifactReference, client: DDIClient, for controllerId: String) throws
    -> Fetch
  {
    guard reference.size <= limits.maxArtifactBytes else {
      throw GatewayRefusal.artifact(
        "the artifact \(reference.filename) is \(reference.size) bytes, over the gateway's limit of "
          + "\(limits.maxArtifactBytes) bytes (otactl gateway --max-artifact-mib)")
    }
    let whole = path(reference)
    if try isWhole(whole, reference) { return Fetch(path: whole, downloaded: 0, resumedFrom: 0) }
    let partial = partialPath(reference)
    let file = try PrivateFile.openExisting(partial) ?? PrivateFile.create(partial)
    defer { try? file.close() }
    var offset = Int(try file.endOffset())
    if offset >= reference.size {
      try file.truncate(to: 0)
      offset = 0
    }
    let sink = DownloadSink(file: file, algorithm: reference.algorithm)
    try sink.digest.update(from: file, count: offset)
    sink.position = offset
    let headers = client.downloadHeaders(reference.url, for: controllerId)
    var received = 0
    func run(from start: Int) throws(HTTPFailure) -> Int {
      let result = try client.http.download(
        reference.url, headers: headers, from: start, limit: reference.size - start, write: sink.take)
      received += result.received
      return result.status
    }
    var status: Int
    do {
      status = try run(from: offset)
    } catch {
      if let writeError = sink.error { throw writeError }
      // A server that cannot resume: start again from the first byte, once.
      guard offset > 0, error.reason.lowercased().contains("range") else { throw error }
      try file.truncate(to: 0)
      sink.restart(reference.algorithm)
      offset = 0
      status = try run(from: 0)
    }
    guard status == 200 || status == 206 else {
      try file.truncate(to: 0)
      throw GatewayRefusal.download("HTTP \(status) for \(reference.url)")
    }
    try file.sync()
    guard sink.position == reference.size else {
      throw GatewayRefusal.download(
        "\(reference.filename) ended after \(sink.position) of \(reference.size) bytes (kept to resume)")
    }
    let digest = sink.digest.finalize()
    guard digest == reference.hash else {
      try FileSystem.unlinkIfPresent(partial)
      throw GatewayRefusal.download(
        "\(reference.filename) has \(reference.algorithm.rawValue) \(digest), the server said \(reference.hash) "
          + "(deleted)")
    }
    try DurableWrite.rename(partial, to: whole)
    return Fetch(path: whole, downloaded: received, resumedFrom: offset)
  }

  /// Whether the cache holds the whole artifact, its size and hash right (hashed from disk); a
  /// file there that is not it is removed.
  private func isWhole(_ whole: String, _ reference: ArtifactReference) throws -> Bool {
    guard let file = try PrivateFile.openExisting(whole) else { return false }
    defer { try? file.close() }
    if try file.endOffset() == UInt64(reference.size) {
      var digest = ArtifactDigest(reference.algorithm)
      try digest.update(from: file, count: reference.size)
      if digest.finalize() == reference.hash { return true }
    }
    try FileSystem.unlinkIfPresent(whole)
    return false
  }
}

/// Where a download's bytes go: written at the partial file's end and hashed on the way.
final class DownloadSink {
  let file: FileDescriptor
  var digest: ArtifactDigest
  var position = 0
  var error: SystemError?

  init(file: FileDescriptor, algorithm: ArtifactReference.Algorithm) {
    self.file = file
    digest = ArtifactDigest(algorithm)
  }

  func restart(_ algorithm: ArtifactReference.Algorithm) {
    digest = ArtifactDigest(algorithm)
    position = 0
  }

  func take(_ chunk: UnsafeRawBufferPointer) -> Bool {
    do throws(SystemError) {
      let written = try file.write(chunk, at: UInt64(position))
      guard written == chunk.count else {
        throw SystemError(operation: "pwrite", path: file.path, errno: .noSpace)
      }
      digest.update(chunk)
      position += chunk.count
      return true
    } catch {
      self.error = error
      return false
    }
  }
}
