import Foundation
import OTAReport
import OTATestSupport
import Testing

/// imgtool's encrypted sample through the two programs: otad holding the device key installs it as
/// its plaintext and says so; otad without one makes otactl exit 15 before anything is sent.
@Suite(.serialized) struct EncryptedImageProcessTests {
  static let image = RepositoryRoot.url("Images/mcuboot-enc-x25519-100KiB.bin").path
  static let signer = RepositoryRoot.url("Images/keys/test-ed25519.pub.pem").path

  @Test func otadWithItsKeyInstallsTheImageAsItsPlaintext() throws {
    // [SEC-ENC-1] [SEC-ENC-2]
    let daemon = try Daemon(firmware: testBytes(4000, seed: 46))
    let key = try daemon.deviceKey("test-device-x25519", mode: 0o644)
    let refused = try runTool(
      "otad", ["run"] + daemon.baseArguments + ["--decryption-key", key], timeout: 20)
    #expect(refused.status == 64 && refused.errors.contains("chmod 600"), "\(refused.errors)")
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)

    try daemon.start(extra: ["--decryption-key", key, "--trusted-key", Self.signer])
    let info = try runTool("otactl", ["info", "--device", daemon.socket])
    #expect(info.output.contains("encrypted images: accepted"), "\(info.output)")
    let push = try runTool(
      "otactl",
      [
        "push", Self.image, "--version", "2.1.0", "--device", daemon.socket, "--link", "mtu=247,interval=2ms",
        "--json",
      ])
    #expect(push.status == 0, "\(push.output)\n\(push.errors)\n\(daemon.log)")
    let final = try #require(push.jsonLines.last { $0["event"] as? String == "result" })
    #expect(final["runningVersion"] as? String == "2.1.0+0" && final["confirmed"] as? Bool == true)
    let payload = try RepositoryRoot.bytes("Images/raw-100KiB.bin")
    let slot = daemon.slotBytes(daemon.slotB, count: 0x200 + payload.count)
    #expect(Array(slot[0x200...]) == payload, "slot B holds the plaintext")
    // `otad status` with the same options: the key it would decrypt with, and the installed image
    // (the plaintext, against what the activation recorded) intact.
    let result = try runTool(
      "otad",
      ["status"] + daemon.storageArguments + [
        "--json", "--decryption-key", key, "--trusted-key", Self.signer,
      ])
    let status = try JSONDecoder().decode(DeviceStatusReport.self, from: Data(result.output.utf8))
    #expect(status.decryptionKey == key)
    #expect(status.runningImage?.hasPrefix("intact") == true, "\(status.runningImage ?? "")")
    #expect(daemon.stop() == 0)
  }

  @Test func withoutAKeyOtactlExits15BeforeSending() throws {
    // [SEC-ENC-1]
    let daemon = try Daemon(firmware: testBytes(4000, seed: 47))
    try daemon.start()
    let push = try runTool(
      "otactl",
      ["push", Self.image, "--version", "2.1.0", "--device", daemon.socket, "--link", "mtu=247,interval=2ms"])
    #expect(push.status == 15, "\(push.output)\n\(push.errors)")
    #expect(
      push.errors.contains("cannot decrypt") && push.errors.contains("[trust] decryption-key"),
      "\(push.errors)")
    #expect(
      !FileManager.default.fileExists(atPath: daemon.slotB.path)
        || daemon.slotBytes(daemon.slotB, count: 16).allSatisfy { $0 == 0 })
    #expect(daemon.stop() == 0)
  }

  @Test func imageInspectOpensTheImageWithTheDeviceKeyOnly() throws {
    let key = RepositoryRoot.url("Images/keys/test-device-x25519.pem").path
    let opened = try runTool(
      "otactl", ["image", "inspect", Self.image, "--key", Self.signer, "--decryption-key", key])
    #expect(opened.status == 0, "\(opened.output)\n\(opened.errors)")
    #expect(opened.output.contains("encrypted: yes, opened with the given X25519 key"))
    let closed = try runTool("otactl", ["image", "inspect", Self.image, "--key", Self.signer])
    #expect(closed.status == 15, "\(closed.output)\n\(closed.errors)")
    let other = RepositoryRoot.url("Images/keys/test-device-rsa-2048.pem").path
    let wrong = try runTool("otactl", ["image", "inspect", Self.image, "--decryption-key", other])
    #expect(wrong.status == 15 && wrong.errors.contains("ENC_X25519"), "\(wrong.errors)")
  }
}
