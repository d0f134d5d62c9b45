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
  static let sha256 = SHA256.hash(data: file).map { String(format: "%02x", $0) }.joined()
  static let sha1 = Insecure.SHA1.hash(data: file).map { String(format: "%02x", $0) }.joined()

  /// Serves `bytes` at /a.swu, honouring "Range: bytes=N-" unless told not to.
  static func server(_ bytes: [UInt8] = file, ranges: Bool = true) async throws -> ScriptedServer {
    try await ScriptedServer([
      (
        "GET /a.swu",
        { request in
          if ranges, let range = request.headers["range"], range.hasPrefix("bytes="),
            let start = Int(range.dropFirst(6).dropLast(range.hasSuffix("-") ? 1 : 0))
          {
            guard start < bytes.count else { return (416, [:], Data()) }
            return (
              206, ["Content-Range": "bytes \(start)-\(bytes.count - 1)/\(bytes.count)"],
              Data(bytes[start...])
            )
          }
          return (200, ["Accept-Ranges": ranges ? "bytes" : "none"], Data(bytes))
        }
      )
    ])
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

  @Test func fetchedOnceThenFromTheCache() async throws {
    let server = try await Self.server()
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    for algorithm in [ArtifactReference.Algorithm.sha256, .sha1] {
      let reference = Self.reference(server, algorithm: algorithm)
      let first = try await offThread {
        Result { try cache.fetch(reference, client: Self.client(server), for: "d1") }
      }.get()
      #expect(first.bytes == Self.file)
      #expect(first.downloaded == Self.file.count)
      let second = try await offThread {
        Result { try cache.fetch(reference, client: Self.client(server), for: "d2") }
      }.get()
      #expect(second.downloaded == 0, "the second device's fetch came from the cache")
      #expect(FileManager.default.fileExists(atPath: cache.path(reference)))
    }
    #expect(server.requests.count == 2)
    // The token went to the server itself.
    #expect(server.requests.allSatisfy { $0.headers["authorization"] == "GatewayToken secret" })
    await server.stop()
  }

  @Test func aStoppedDownloadGoesOnWhereItStopped() async throws {
    let server = try await Self.server()
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    try Data(Self.file.prefix(20_000)).write(to: URL(fileURLWithPath: cache.partialPath(reference)))
    let fetch = try await offThread {
      Result { try cache.fetch(reference, client: Self.client(server), for: "d") }
    }.get()
    #expect(fetch.bytes == Self.file)
    #expect(fetch.resumedFrom == 20_000)
    #expect(fetch.downloaded == 30_000)
    #expect(server.requests.map { $0.headers["range"] } == ["bytes=20000-"])
    await server.stop()
  }

  @Test func aServerThatCannotResumeIsReadFromTheStart() async throws {
    let server = try await Self.server(ranges: false)
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    try Data(Self.file.prefix(1000)).write(to: URL(fileURLWithPath: cache.partialPath(reference)))
    let fetch = try await offThread {
      Result { try cache.fetch(reference, client: Self.client(server), for: "d") }
    }.get()
    #expect(fetch.bytes == Self.file)
    #expect(fetch.resumedFrom == 0 || fetch.downloaded == Self.file.count)
    await server.stop()
  }

  @Test func aWrongHashIsRefusedAndNotKept() async throws {
    var other = Self.file
    other[100] ^= 1
    let server = try await Self.server(other)
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    let result = await offThread {
      Result { try cache.fetch(reference, client: Self.client(server), for: "d") }
    }
    #expect(throws: GatewayRefusal.self) { try result.get() }
    if case .failure(let error) = result { #expect("\(error)".contains("the server said \(Self.sha256)")) }
    #expect(!FileManager.default.fileExists(atPath: cache.path(reference)))
    #expect(!FileManager.default.fileExists(atPath: cache.partialPath(reference)))
    await server.stop()
  }

  @Test func aTruncatedArtifactIsRefusedAndKeptToResume() async throws {
    let server = try await Self.server(Array(Self.file.prefix(30_000)))
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let reference = Self.reference(server)
    let result = await offThread {
      Result { try cache.fetch(reference, client: Self.client(server), for: "d") }
    }
    guard case .failure(let error) = result else {
      Issue.record("taken")
      return
    }
    #expect("\(error)".contains("ended after 30000 of 50000 bytes"))
    #expect(!FileManager.default.fileExists(atPath: cache.path(reference)))
    await server.stop()
  }

  @Test func moreBytesThanTheServerSaidAreRefused() async throws {
    let server = try await Self.server(Self.file + [1, 2, 3])
    let folder = try TemporaryDirectory(label: "gateway-cache")
    defer { folder.remove() }
    let cache = try ArtifactCache(directory: folder.path)
    let result = await offThread {
      Result { try cache.fetch(Self.reference(server), client: Self.client(server), for: "d") }
    }
    guard case .failure(let error) = result else {
      Issue.record("taken")
      return
    }
    #expect("\(error)".contains("longer than 50000 bytes"))
    await server.stop()
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
