import Foundation
import OTATestSupport
import Testing

/// `otactl image keygen/create/sign/inspect` as a user runs them: files, exit codes, messages, and
/// the real imgtool accepting what they make.
@Suite struct ImageCommandTests {
  let folder: URL

  init() throws {
    folder = try TemporaryDirectory(label: "otactl-image").url
  }

  func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

  func image(_ arguments: [String]) throws -> CommandResult { try runTool("otactl", ["image"] + arguments) }

  func mode(_ name: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path(name))[.posixPermissions] as? Int) ?? -1
  }

  func text(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }

  func json(_ result: CommandResult) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
  }

  @Test func keygenWritesAPrivateKeyOnlyItsOwnerCanReadAndRefusesToOverwrite() throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let made = try image([
      "keygen", "--type", "ecdsa-p256", "--key", path("k.pem"), "--public", path("k.pub.pem"),
    ])
    #expect(made.status == 0, "\(made.errors)")
    #expect(try mode("k.pem") == 0o600)
    #expect(try text("k.pem").hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
    #expect(try text("k.pub.pem").hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
    let original = try text("k.pem")

    let again = try image(["keygen", "--type", "ed25519", "--key", path("k.pem")])
    #expect(again.status == 64)
    #expect(again.errors == "otactl image keygen: \(path("k.pem")) exists; give --force to replace it\n")
    #expect(try text("k.pem") == original, "the existing key is untouched")
    let publicOnly = try image([
      "keygen", "--type", "ed25519", "--key", path("other.pem"), "--public", path("k.pub.pem"),
    ])
    #expect(publicOnly.status == 64)
    #expect(
      !FileManager.default.fileExists(atPath: path("other.pem")), "nothing is written when one output exists")

    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path("k.pem"))
    let forced = try image(["keygen", "--type", "ed25519", "--key", path("k.pem"), "--force"])
    #expect(forced.status == 0, "\(forced.errors)")
    #expect(try text("k.pem") != original)
    #expect(try mode("k.pem") == 0o600, "a replaced key is 0600 again")

    let bad = try image(["keygen", "--type", "rsa", "--key", path("r.pem")])
    #expect(bad.status == 64)
    #expect(bad.errors.contains("rsa"))
  }

  @Test func createSignInspectEndToEnd() throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(testBytes(10_000, seed: 7)).write(to: URL(fileURLWithPath: path("app.bin")))
    for (name, type) in [("release", "ed25519"), ("other", "ecdsa-p256")] {
      let made = try image([
        "keygen", "--type", type, "--key", path("\(name).pem"), "--public", path("\(name).pub.pem"),
      ])
      #expect(made.status == 0, "\(made.errors)")
    }

    let created = try image([
      "create", path("app.bin"), path("app.img"), "--version", "1.2.3+4", "--header-size", "0x400", "--key",
      path("release.pem"), "--security-counter", "auto",
    ])
    #expect(created.status == 0, "\(created.errors)")
    #expect(created.output.contains("MCUboot image 1.2.3+4"))

    let inspected = try image(["inspect", path("app.img"), "--key", path("release.pub.pem"), "--json"])
    #expect(inspected.status == 0, "\(inspected.output)\(inspected.errors)")
    let report = try json(inspected)
    #expect(report["ok"] as? Bool == true)
    #expect(report["version"] as? String == "1.2.3+4")
    #expect(report["securityCounter"] as? Int == 0x0102_0003)
    #expect((report["header"] as? [String: Any])?["headerSize"] as? Int == 0x400)
    #expect((report["header"] as? [String: Any])?["imageSize"] as? Int == 10_000)
    #expect((report["hash"] as? [String: Any])?["result"] as? String == "matches")
    #expect((report["signature"] as? [String: Any])?["result"] as? String == "verified")

    let text = try image(["inspect", path("app.img")])
    #expect(text.status == 0)
    #expect(text.output.contains("version:   1.2.3+4"))
    #expect(text.output.contains("signature: not checked (no --key given)"))

    let wrongKey = try image(["inspect", path("app.img"), "--key", path("other.pub.pem")])
    #expect(wrongKey.status == 11, "signature invalid, as for a push")
    #expect(
      wrongKey.errors.hasPrefix(
        "otactl image inspect: \(path("app.img")): signature INVALID: signed by a key"))
    // A private key file stands for its public key; several keys may be given.
    let privateKey = try image([
      "inspect", path("app.img"), "--key", path("other.pem"), "--key", path("release.pem"),
    ])
    #expect(privateKey.status == 0, "\(privateKey.errors)")

    let signed = try image(["sign", path("app.img"), path("app-other.img"), "--key", path("other.pem")])
    #expect(signed.status == 0, "\(signed.errors)")
    #expect(try image(["inspect", path("app-other.img"), "--key", path("other.pub.pem")]).status == 0)
    #expect(try image(["inspect", path("app-other.img"), "--key", path("release.pub.pem")]).status == 11)
    let before = try Data(contentsOf: URL(fileURLWithPath: path("app.img")))
    let after = try Data(contentsOf: URL(fileURLWithPath: path("app-other.img")))
    #expect(
      before.prefix(0x400 + 10_000 + 12) == after.prefix(0x400 + 10_000 + 12), "header, payload, SEC_CNT kept"
    )

    var damaged = [UInt8](before)
    damaged[0x400 + 100] ^= 0x01
    try Data(damaged).write(to: URL(fileURLWithPath: path("damaged.img")))
    let mismatch = try image(["inspect", path("damaged.img"), "--key", path("release.pub.pem")])
    #expect(mismatch.status == 6, "validation failed, as for a push")
    #expect(mismatch.errors.contains("hash MISMATCH: the SHA256 TLV holds"))
    let refused = try image(["sign", path("damaged.img"), path("resigned.img"), "--key", path("release.pem")])
    #expect(refused.status == 10)
    #expect(refused.errors.contains("it was changed after it was made; refusing to sign it"))
    #expect(!FileManager.default.fileExists(atPath: path("resigned.img")))
  }

  @Test func badInputsAreOneReadableLineAndADistinctCode() throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(testBytes(100, seed: 8)).write(to: URL(fileURLWithPath: path("raw.bin")))
    let checks: [([String], Int32, String)] = [
      (
        ["inspect", path("raw.bin")], 10, "not an MCUboot image: it does not start with the magic 0x96f3b83d"
      ),
      (["inspect", path("missing.img")], 10, "the image \(path("missing.img")) does not exist"),
      (["sign", path("raw.bin"), path("out.img"), "--key", path("missing.pem")], 64, "does not exist"),
      (
        ["create", path("raw.bin"), path("out.img"), "--version", "1.0.0", "--header-size", "16"], 64,
        "header size 16 is too small"
      ),
      (
        ["create", path("raw.bin"), path("out.img"), "--version", "1.0.0", "--header-size", "0x10000"], 64,
        "header size 65536 is too large"
      ),
      (["create", path("raw.bin"), path("out.img"), "--version", "1.2.x"], 64, "--version"),
      (
        ["create", path("raw.bin"), path("out.img"), "--version", "1.0.0", "--security-counter", "-1"], 64,
        "--security-counter"
      ),
      (
        ["create", path("raw.bin"), path("out.img"), "--version", "1.0.0", "--key", path("raw.bin")], 64,
        "not a PEM key"
      ),
    ]
    for (arguments, status, message) in checks {
      let result = try image(arguments)
      #expect(result.status == status, "\(arguments): \(result.errors)")
      #expect(result.errors.contains(message), "\(arguments): \(result.errors)")
      #expect(!result.errors.contains("Fatal error"), "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: path("out.img")))
    let sign = try image(["sign", path("raw.bin"), path("out.img"), "--key", path("raw.bin")])
    #expect(sign.status == 64, "the key is read before the image is judged: \(sign.errors)")
  }

  /// What otactl makes, MCUboot's imgtool accepts (the library-level interop is in OTATrustTests).
  @Test func imgtoolVerifiesWhatOtactlMade() throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let imgtool = try #require(
      locateImgtool(),
      "imgtool not found: run Scripts/setup.sh (blueota_install_imgtool) or set BLUEOTA_IMGTOOL")
    try Data(testBytes(3000, seed: 9)).write(to: URL(fileURLWithPath: path("app.bin")))
    #expect(try image(["keygen", "--type", "ecdsa-p256", "--key", path("k.pem")]).status == 0)
    #expect(try image(["keygen", "--type", "ed25519", "--key", path("e.pem")]).status == 0)
    #expect(
      try image([
        "create", path("app.bin"), path("app.img"), "--version", "4.5.6", "--key", path("k.pem"),
        "--security-counter", "9",
      ]).status == 0)
    #expect(try image(["sign", path("app.img"), path("app-e.img"), "--key", path("e.pem")]).status == 0)
    for (file, key) in [("app.img", "k.pem"), ("app-e.img", "e.pem")] {
      let verified = try runProgram(imgtool, ["verify", "-k", path(key), path(file)])
      #expect(verified.status == 0, "\(verified.output)")
      #expect(verified.output.contains("Image version: 4.5.6+0"))
    }
    #expect(try runProgram(imgtool, ["verify", "-k", path("k.pem"), path("app-e.img")]).status != 0)
  }

  /// imgtool: $BLUEOTA_IMGTOOL, then `<repo>/.build-imgtool/bin/imgtool`, then PATH.
  func locateImgtool() -> String? {
    let environment = ProcessInfo.processInfo.environment
    if let configured = environment["BLUEOTA_IMGTOOL"], !configured.isEmpty {
      return FileManager.default.isExecutableFile(atPath: configured) ? configured : nil
    }
    let root = RepositoryRoot.url
    let candidates =
      [root.appendingPathComponent(".build-imgtool/bin/imgtool").path]
      + (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/imgtool" }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  func runProgram(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }
}

/// `otactl --help` lists every exit code that docs/OTACTL.md's table lists, the same for all commands.
@Suite struct ExitCodeHelpTests {
  @Test func helpListsEveryDocumentedExitCode() throws {
    let root = RepositoryRoot.url
    let doc = try String(contentsOf: root.appendingPathComponent("docs/OTACTL.md"), encoding: .utf8)
    let table = doc.components(separatedBy: "## Exit codes").dropFirst().first ?? ""
    let codes = table.split(separator: "\n").filter { $0.hasPrefix("| ") }.compactMap { row in
      Int(row.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) ?? "")
    }
    #expect(codes.count >= 10)
    let help = try runTool("otactl", ["--help"]).output.split(whereSeparator: \.isWhitespace)
      .joined(separator: " ")
    let listed = help.components(separatedBy: "Exit codes").dropFirst().joined()
    for code in codes {
      #expect(
        listed.contains("\(code) ") && (listed.contains(": \(code) ") || listed.contains("; \(code) ")),
        "exit code \(code) is not in --help")
    }
  }
}
