import Foundation
import OTAGateway
import OTAGatewayHTTP
import OTASystem
import OTATestSupport
import Testing

/// The gateway's own files are made exclusively, mode 0600, and never through a planted link.
struct PrivateFileTests {
  static func mode(_ path: String) throws -> Int? {
    try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
  }

  @Test func aNewFileIsTheGatewaysAloneAndAnExistingOneIsNotTakenOver() throws {
    let folder = try TemporaryDirectory(label: "gateway-files")
    defer { folder.remove() }
    let file = try PrivateFile.create(folder.path("a"))
    try file.close()
    #expect(try Self.mode(folder.path("a")) == 0o600)
    #expect(throws: SystemError.self) { try PrivateFile.create(folder.path("a")) }
  }

  @Test func aPlantedLinkIsNeitherCreatedThroughNorOpened() throws {
    // [SEC-GW-5]
    let folder = try TemporaryDirectory(label: "gateway-files")
    defer { folder.remove() }
    let victim = try folder.write([9], "victim")
    try FileManager.default.createSymbolicLink(atPath: folder.path("link"), withDestinationPath: victim)
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("dangling"), withDestinationPath: folder.path("nowhere"))
    #expect(throws: SystemError.self) { try PrivateFile.create(folder.path("link")) }
    #expect(throws: SystemError.self) { try PrivateFile.create(folder.path("dangling")) }
    #expect(throws: SystemError.self) { try PrivateFile.openExisting(folder.path("link")) }
    #expect(!FileManager.default.fileExists(atPath: folder.path("nowhere")))
    #expect(try PrivateFile.openExisting(folder.path("absent")) == nil)
    #expect(try folder.read("victim") == [9])
  }

  @Test func aReplaceRemovesALinkPlantedAsItsTemporaryFile() throws {
    let folder = try TemporaryDirectory(label: "gateway-files")
    defer { folder.remove() }
    let victim = try folder.write([9], "victim")
    try FileManager.default.createSymbolicLink(
      atPath: folder.path("state.json.tmp"), withDestinationPath: victim)
    try PrivateFile.replace(folder.path("state.json"), with: Array("{}".utf8))
    #expect(try folder.read("state.json") == Array("{}".utf8))
    #expect(try Self.mode(folder.path("state.json")) == 0o600)
    #expect(try folder.read("victim") == [9])
  }
}

/// A token file is taken only when it is a regular file of the gateway's user (or root) that no
/// one else may read or write.
struct TokenFileTests {
  @Test func ownerAndModeAreChecked() {
    // [SEC-GW-6]
    let ok = TokenFile.problem("/t", kind: .regular, owner: 1000, permissions: 0o600, user: 1000)
    #expect(ok == nil)
    #expect(TokenFile.problem("/t", kind: .regular, owner: 0, permissions: 0o400, user: 1000) == nil)
    #expect(
      TokenFile.problem("/t", kind: .regular, owner: 1001, permissions: 0o600, user: 1000)
        == .foreignOwner("/t", owner: 1001, user: 1000))
    for mode: UInt32 in [0o640, 0o604, 0o620, 0o644, 0o660] {
      #expect(
        TokenFile.problem("/t", kind: .regular, owner: 1000, permissions: mode, user: 1000)
          == .openToOthers("/t", mode: mode))
    }
    #expect(
      TokenFile.problem("/t", kind: .directory, owner: 1000, permissions: 0o700, user: 1000)
        == .notRegular("/t"))
  }

  @Test func theErrorsNameTheFileAndTheFix() {
    let open = TokenFile.Problem.openToOthers("/etc/blueota/token", mode: 0o644).description
    #expect(open.contains("/etc/blueota/token") && open.contains("mode 644") && open.contains("chmod 600"))
    let foreign = TokenFile.Problem.foreignOwner("/t", owner: 1001, user: 1000).description
    #expect(foreign.contains("belongs to user 1001") && foreign.contains("chown 1000 /t"))
  }

  @Test func aRealFileIsReadOnlyWhenPrivate() throws {
    // [SEC-GW-6]
    let folder = try TemporaryDirectory(label: "gateway-token")
    defer { folder.remove() }
    let path = try folder.write(Array("secret\n".utf8), "token")
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
    #expect(throws: TokenFile.Problem.openToOthers(path, mode: 0o644)) { try TokenFile.read(path) }
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    #expect(try TokenFile.read(path) == "secret\n")
    #expect(throws: TokenFile.Problem.missing(folder.path("none"))) {
      try TokenFile.read(folder.path("none"))
    }
    // Read as another user would: the file is not theirs (unless root's).
    let owner = ProcessEnvironment.effectiveUserID
    if owner != 0 {
      #expect(throws: TokenFile.Problem.foreignOwner(path, owner: owner, user: owner + 1)) {
        try TokenFile.read(path, user: owner + 1)
      }
    } else {
      // A root-owned file is taken by any user the gateway runs as.
      #expect(try TokenFile.read(path, user: 4242) == "secret\n")
      try FileManager.default.setAttributes([.ownerAccountID: 4243], ofItemAtPath: path)
      #expect(throws: TokenFile.Problem.foreignOwner(path, owner: 4243, user: 4242)) {
        try TokenFile.read(path, user: 4242)
      }
    }
  }
}

/// Without --state-dir and HOME the gateway refuses to start rather than keep its state in /tmp.
struct GatewayStateDirectoryTests {
  @Test func theDirectoryIsGivenOrUnderHomeNeverTmp() throws {
    // [SEC-GW-5]
    #expect(try GatewayStateDirectory.path(given: "/var/lib/gw", home: nil) == "/var/lib/gw")
    #expect(
      try GatewayStateDirectory.path(given: nil, home: "/home/ops") == "/home/ops/.cache/otactl-gateway")
    for home in [nil, "", "/", "relative"] {
      #expect(throws: GatewayStateDirectory.Missing()) {
        try GatewayStateDirectory.path(given: nil, home: home)
      }
    }
    #expect("\(GatewayStateDirectory.Missing())".contains("--state-dir"))
  }
}
