import OTATrust
import Testing

/// otad's serial without configuration: systemd's `sd_id128_get_machine_app_specific()` under
/// BlueOTA's application UUID. The vectors were computed outside Swift, two ways that agree:
///
///     # Python (hmac, hashlib): HMAC-SHA256 keyed with the machine-id's 16 bytes over the
///     # application UUID's 16 bytes, the first 16 bytes, made a v4 UUID.
///     import hmac, hashlib
///     def app_specific(machine_id, app="821676d0a5394d9db00f7105f4b10aac"):
///         d = bytearray(hmac.new(bytes.fromhex(machine_id), bytes.fromhex(app), hashlib.sha256).digest()[:16])
///         d[6] = (d[6] & 0x0F) | 0x40
///         d[8] = (d[8] & 0x3F) | 0x80
///         return d.hex()
///
///     # systemd itself, on a machine whose /etc/machine-id is 3d1219c7c4c5404aaa1f6d2a48adfda4:
///     $ systemd-id128 machine-id --app-specific=821676d0a5394d9db00f7105f4b10aac
///     0328b1e8c62c4027bc6dab2d336a8fcd
@Suite struct MachineAppSpecificIDTests {
  @Test(arguments: [
    // Printed by systemd-id128 (and by the Python above).
    ("3d1219c7c4c5404aaa1f6d2a48adfda4", "0328b1e8c62c4027bc6dab2d336a8fcd"),
    // The Python above, for an easy-to-type machine-id.
    ("0123456789abcdef0123456789abcdef", "526f25d7786c4e7c8b0b99ed23ad16ae"),
  ])
  func theSerialIsSystemdsAppSpecificID(machineID: String, serial: String) throws {
    let bytes = try #require(MachineAppSpecificID.machineID(text: machineID + "\n"))
    #expect(MachineAppSpecificID.hex(machineID: bytes) == serial)
    let id = MachineAppSpecificID.derive(machineID: bytes)
    #expect(id.count == 16 && id[6] >> 4 == 4 && id[8] >> 6 == 0b10, "a version-4 UUID, RFC 4122 variant")
  }

  @Test func theApplicationIsBlueOTAsUUID() {
    let hex = MachineAppSpecificID.blueOTA.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    #expect(hex == "821676d0a5394d9db00f7105f4b10aac")
  }

  @Test(arguments: [
    "", "uninitialized\n", "3d1219c7c4c5404aaa1f6d2a48adfda\n", "3d1219c7c4c5404aaa1f6d2a48adfdzz",
  ])
  func aFileThatIsNoMachineIDIsRefused(_ text: String) {
    #expect(MachineAppSpecificID.machineID(text: text) == nil)
  }

  @Test func upperCaseAndNoNewlineAreReadToo() {
    #expect(
      MachineAppSpecificID.machineID(text: "3D1219C7C4C5404AAA1F6D2A48ADFDA4")
        == MachineAppSpecificID.machineID(text: "3d1219c7c4c5404aaa1f6d2a48adfda4\n"))
  }
}
