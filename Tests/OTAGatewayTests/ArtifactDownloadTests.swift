import Crypto
import Foundation
import OTAGateway
import OTAGatewayHTTP
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
      #expect(first.bytes == Self.file)
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

  /// A fetch into a fresh cache whose partial file holds the file's first `partial` bytes.
  static func fetch(from server: ScriptedServer, partial: Int) throws -> ArtifactCache.Fetch {
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    try Data(Self.file.prefix(partial)).write(to: URL(fileURLWithPath: cache.partialPath(reference)))
    return try cache.fetch(reference, client: Self.client(server), for: "d")
  }

  @Test func aStoppedDownloadGoesOnWhereItStopped() throws {
    let server = try Self.server()
    let fetch = try Self.fetch(from: server, partial: 20_000)
    #expect(fetch.bytes == Self.file)
    #expect(fetch.resumedFrom == 20_000)
    #expect(fetch.downloaded == 30_000)
    #expect(server.requests.map { $0.headers["range"] } == ["bytes=20000-"])
    server.stop()
  }

  @Test func aServerThatCannotResumeIsReadFromTheStart() throws {
    let server = try Self.server(ranges: false)
    let fetch = try Self.fetch(from: server, partial: 1000)
    #expect(fetch.bytes == Self.file)
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
}
