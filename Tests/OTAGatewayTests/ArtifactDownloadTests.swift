import Crypto
import Foundation
import OTAGateway
import OTAGatewayHTTP
import OTASystem
import OTATestSupport
import OTAWire
import Testing

/// The artifact cache over real HTTP (libcurl against a server on the loopback address): fetched
/// once, resumed with a Range request, refused when it is not what the server said.
@Suite(.serialized)
struct ArtifactDownloadTests {
  static let file = SeededGenerator.bytes(50_000, seed: 11)
  static let sha256 = Hex.string(SHA256.hash(data: file))
  static let sha1 = Hex.string(Insecure.SHA1.hash(data: file))

  /// Serves `bytes` at /a.swu, honouring "Range: bytes=N-" unless told not to.
  static func server(_ bytes: [UInt8] = file, ranges: Bool = true) throws -> ScriptedServer {
    try ScriptedServer(["GET /a.swu": .init(body: bytes, ranges: ranges)])
  }

  static func reference(
    _ server: ScriptedServer, algorithm: ArtifactReference.Algorithm = .sha256, size: Int = file.count
  )
    -> ArtifactReference
  {
    ArtifactReference(
      filename: "a.swu", size: size, algorithm: algorithm, hash: algorithm == .sha256 ? sha256 : sha1,
      url: "\(server.url)/a.swu")
  }

  static func client(_ server: ScriptedServer) -> DDIClient {
    DDIClient(
      server: server.url, tenant: "DEFAULT", authorization: .gateway("secret"),
      http: CurlHTTPClient(settings: HTTPSettings()))
  }

  @Test func fetchedOnceThenFromTheCache() throws {
    let server = try Self.server()
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    for algorithm in [ArtifactReference.Algorithm.sha256, .sha1] {
      let reference = Self.reference(server, algorithm: algorithm)
      let first = try cache.fetch(reference, client: Self.client(server), for: "d1")
      #expect(try first.bytes() == Self.file)
      #expect(first.downloaded == Self.file.count)
      let second = try cache.fetch(reference, client: Self.client(server), for: "d2")
      #expect(second.downloaded == 0, "the second device's fetch came from the cache")
      #expect(FileManager.default.fileExists(atPath: cache.path(reference)))
    }
    #expect(server.requests.count == 2)
    // The token went to the server itself.
    #expect(server.requests.allSatisfy { $0.headers["authorization"] == "GatewayToken secret" })
    server.stop()
  }

  /// A fetch into a fresh cache whose partial file holds the file's first `partial` bytes, and the
  /// bytes it fetched.
  static func fetch(from server: ScriptedServer, partial: Int) throws -> (ArtifactCache.Fetch, [UInt8]) {
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    try Data(Self.file.prefix(partial)).write(to: URL(fileURLWithPath: cache.partialPath(reference)))
    let fetch = try cache.fetch(reference, client: Self.client(server), for: "d")
    return (fetch, try fetch.bytes())
  }

  @Test func aStoppedDownloadGoesOnWhereItStopped() throws {
    let server = try Self.server()
    let (fetch, bytes) = try Self.fetch(from: server, partial: 20_000)
    #expect(bytes == Self.file)
    #expect(fetch.resumedFrom == 20_000)
    #expect(fetch.downloaded == 30_000)
    #expect(server.requests.map { $0.headers["range"] } == ["bytes=20000-"])
    server.stop()
  }

  @Test func aServerThatCannotResumeIsReadFromTheStart() throws {
    let server = try Self.server(ranges: false)
    let (fetch, bytes) = try Self.fetch(from: server, partial: 1000)
    #expect(bytes == Self.file)
    #expect(fetch.resumedFrom == 0)
    #expect(fetch.downloaded == Self.file.count)
    // The Range request answered 200 with the whole file: curl refuses to resume, so once more
    // from the first byte.
    #expect(server.requests.map { $0.headers["range"] } == ["bytes=1000-", nil])
    server.stop()
  }

  @Test func aWrongHashIsRefusedAndNotKept() throws {
    var other = Self.file
    other[100] ^= 1
    let server = try Self.server(other)
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    let result = Result { try cache.fetch(reference, client: Self.client(server), for: "d") }
    #expect(throws: GatewayRefusal.self) { try result.get() }
    if case .failure(let error) = result { #expect("\(error)".contains("the server said \(Self.sha256)")) }
    #expect(!FileManager.default.fileExists(atPath: cache.path(reference)))
    #expect(!FileManager.default.fileExists(atPath: cache.partialPath(reference)))
    server.stop()
  }

  @Test func aTruncatedArtifactIsRefusedAndKeptToResume() throws {
    let server = try Self.server(Array(Self.file.prefix(30_000)))
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    let result = Result { try cache.fetch(reference, client: Self.client(server), for: "d") }
    guard case .failure(let error) = result else {
      Issue.record("taken")
      return
    }
    #expect("\(error)".contains("ended after 30000 of 50000 bytes"))
    #expect(!FileManager.default.fileExists(atPath: cache.path(reference)))
    server.stop()
  }

  @Test func moreBytesThanTheServerSaidAreRefused() throws {
    let server = try Self.server(Self.file + [1, 2, 3])
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let result = Result { try cache.fetch(Self.reference(server), client: Self.client(server), for: "d") }
    guard case .failure(let error) = result else {
      Issue.record("taken")
      return
    }
    #expect("\(error)".contains("longer than 50000 bytes"))
    server.stop()
  }

  @Test func anArtifactOverTheLimitIsRefusedBeforeAByteIsFetched() throws {
    // [SEC-GW-3]
    let server = try Self.server()
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(
      directory: folder.path, limits: ArtifactCache.Limits(maxArtifactBytes: Self.file.count - 1))
    let result = Result { try cache.fetch(Self.reference(server), client: Self.client(server), for: "d") }
    guard case .failure(let error) = result, let refusal = error as? GatewayRefusal,
      case .artifact(let reason) = refusal
    else {
      Issue.record("taken: \(result)")
      return
    }
    #expect(reason.contains("is 50000 bytes, over the gateway's limit of 49999 bytes"))
    #expect(reason.contains("--max-artifact-mib"))
    #expect(server.requests.isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    server.stop()
  }

  /// The download goes to a partial file only the gateway's user may read, hashed as it arrives;
  /// the whole file in the cache is checked from disk before it is used again.
  @Test func aDamagedCachedArtifactIsFetchedAgain() throws {
    let server = try Self.server()
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    _ = try cache.fetch(reference, client: Self.client(server), for: "d")
    let mode = try FileManager.default.attributesOfItem(atPath: cache.path(reference))[.posixPermissions]
    #expect((mode as? Int) == 0o600)
    var damaged = Self.file
    damaged[7] ^= 0xFF
    try Data(damaged).write(to: URL(fileURLWithPath: cache.path(reference)))
    let again = try cache.fetch(reference, client: Self.client(server), for: "d")
    #expect(again.downloaded == Self.file.count)
    #expect(try again.bytes() == Self.file)
    #expect(server.requests.count == 2)
    server.stop()
  }

  /// A symbolic link planted where the partial download goes is refused, never followed.
  @Test func aLinkPlantedAsThePartialFileIsNotFollowed() throws {
    // [SEC-GW-5]
    let server = try Self.server()
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: "\(folder.path)/cache")
    let victim = try folder.write([1, 2, 3], "victim")
    let reference = Self.reference(server)
    try FileManager.default.createSymbolicLink(
      atPath: cache.partialPath(reference), withDestinationPath: victim)
    #expect(throws: SystemError.self) { try cache.fetch(reference, client: Self.client(server), for: "d") }
    #expect(try folder.read("victim") == [1, 2, 3])
    #expect(server.requests.isEmpty)
    server.stop()
  }
}

/// The cache keeps a few releases, not every one.
struct ArtifactCachePruneTests {
  @Test func theNewestAndTheOnesInUseStay() throws {
    let folder = try TemporaryDirectory(label: "gateway-prune")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    for index in 0..<6 {
      let path = try folder.write([UInt8(index)], "sha256-\(index).swu")
      // Older names first: each file a minute older than the next.
      let date = Date(timeIntervalSinceNow: Double(index - 10) * 60)
      try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }
    let oldPart = try folder.write([1], "sha256-9.part")
    try FileManager.default.setAttributes(
      [.modificationDate: Date(timeIntervalSinceNow: -8 * 86400)], ofItemAtPath: oldPart)
    try folder.write([1], "sha256-8.part")
    try cache.prune(keeping: 2, inUse: ["sha256-0"])
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    #expect(left == ["sha256-0.swu", "sha256-4.swu", "sha256-5.swu", "sha256-8.part"])
  }

  /// Partial downloads beyond their total cap go oldest first (never the one in use); those past
  /// their age go whatever their size.
  @Test func partialFilesAreCappedInBytesAndAge() throws {
    // [SEC-GW-3]
    let folder = try TemporaryDirectory(label: "gateway-prune")
    defer { folder.remove() }
    let cache = try ArtifactCache(
      directory: folder.path,
      limits: ArtifactCache.Limits(maxPartialBytes: 2500, maxPartialAge: .seconds(3600)))
    // p0 the oldest ... p4 the newest, 1000 bytes each; p5 two hours old; p0 in use.
    for index in 0..<6 {
      let path = try folder.write([UInt8](repeating: 1, count: 1000), "sha256-p\(index).part")
      let age = index == 5 ? 7200.0 : Double(10 - index) * 60
      try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: path)
    }
    try cache.prune(keeping: 3, inUse: ["sha256-p0"])
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    // p5 past its age; then 5000 bytes over 2500: p1, p2 and p3 go (oldest first), p0 is in use.
    #expect(left == ["sha256-p0.part", "sha256-p4.part"])
  }
}
