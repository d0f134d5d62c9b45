/// The one artifact of a deployment the gateway downloads: its name, size, hash and link, checked
/// before a byte is fetched.
public struct ArtifactReference: Equatable, Sendable {
  public enum Algorithm: String, Sendable { case sha256, sha1 }

  public var filename: String
  public var size: Int
  public var algorithm: Algorithm
  /// Lowercase hexadecimal.
  public var hash: String
  public var url: String

  public init(filename: String, size: Int, algorithm: Algorithm, hash: String, url: String) {
    self.filename = filename
    self.size = size
    self.algorithm = algorithm
    self.hash = hash
    self.url = url
  }

  /// The cache's key: the algorithm and the hash, so the same file offered under two names or to
  /// many targets is fetched once.
  public var key: String { "\(algorithm.rawValue)-\(hash)" }

  /// The largest artifact the gateway takes: no MCUboot slot holds more.
  public static let maximumSize = 1 << 32

  /// The deployment's artifact: the one `.swu` among its chunks' artifacts (or its only artifact),
  /// with SHA-256 when the server gives it, else SHA-1 (goosebit gives SHA-1 only), and a link on
  /// the server's own scheme (an HTTPS server's artifact never comes over plain HTTP).
  public static func choose(from base: DDIDeploymentBase, serverScheme: String) throws(GatewayRefusal) -> Self
  {
    let all = base.deployment.chunks.flatMap(\.artifacts)
    let swu = all.filter { $0.filename.lowercased().hasSuffix(".swu") }
    let artifact: DDIDeploymentBase.Artifact
    switch (swu.count, all.count) {
    case (1, _): artifact = swu[0]
    case (0, 1): artifact = all[0]
    case (0, 0): throw .artifact("the deployment has no artifact")
    default:
      throw .artifact(
        "the deployment has \(swu.isEmpty ? all.count : swu.count) artifacts and none stands out: "
          + "the gateway pushes one .swu per device")
    }
    guard artifact.size > 0, artifact.size <= maximumSize else {
      throw .artifact("the artifact \(artifact.filename) claims \(artifact.size) bytes (1 to \(maximumSize))")
    }
    // The algorithm's name in any case ("sha256", "SHA256"): every spelling must give one value.
    // (Keeping the first of a dictionary took whichever the process's hash seed put first.)
    func given(_ algorithm: Algorithm) throws(GatewayRefusal) -> String? {
      let values = Set(
        artifact.hashes.filter { $0.key.lowercased() == algorithm.rawValue }.values.map { $0.lowercased() })
      guard values.count <= 1 else {
        throw .artifact(
          "the artifact \(artifact.filename) gives \(values.count) different \(algorithm.rawValue) hashes")
      }
      return values.first
    }
    let algorithm: Algorithm
    let hash: String
    if let value = try given(.sha256) {
      (algorithm, hash) = (.sha256, value)
    } else if let value = try given(.sha1) {
      (algorithm, hash) = (.sha1, value)
    } else {
      throw .artifact("the artifact \(artifact.filename) has no SHA-256 or SHA-1 hash to check it by")
    }
    let length = algorithm == .sha256 ? 64 : 40
    // ASCII digits only: Character.isHexDigit also takes fullwidth ones, which no digest has.
    guard hash.utf8.count == length, hash.utf8.allSatisfy({ ASCIIHex.digit($0) != nil }) else {
      throw .artifact("the artifact's \(algorithm.rawValue) '\(hash.prefix(80))' is not \(length) hex digits")
    }
    guard let link = artifact.links["download"] ?? artifact.links["download-http"] else {
      throw .artifact("the artifact \(artifact.filename) has no download link")
    }
    let lower = link.href.lowercased()
    guard lower.hasPrefix("https://") || (lower.hasPrefix("http://") && serverScheme == "http") else {
      throw .artifact(
        "the artifact's link \(link.href.prefix(120)) is not \(serverScheme == "https" ? "HTTPS" : "HTTP(S)")"
      )
    }
    return ArtifactReference(
      filename: artifact.filename, size: artifact.size, algorithm: algorithm, hash: hash, url: link.href)
  }
}
