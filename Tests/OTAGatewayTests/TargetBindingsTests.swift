import Foundation
import OTAGateway
import OTAGatewayHTTP
import OTATestSupport
import Testing

/// A serial is bound to the Bluetooth identity that first said it; another identity claiming it
/// is an alarm for both, and neither is served.
struct TargetBindingsTests {
  static func seen(_ device: String, _ identity: String, _ serial: String) -> TargetBindings.Sighting {
    TargetBindings.Sighting(device: device, identity: identity, serial: serial)
  }

  @Test func theFirstIdentityToSayASerialIsBoundAndServed() {
    var bindings = TargetBindings()
    let first = bindings.admit([Self.seen("a.sock", "socket a.sock", "sim-1")], now: 5)
    #expect(first.serve == [Self.seen("a.sock", "socket a.sock", "sim-1")])
    #expect(first.alarms.isEmpty)
    #expect(first.changed)
    #expect(bindings.identity(of: "sim-1") == "socket a.sock")
    #expect(bindings.bindings["sim-1"]?.since == 5)
    let again = bindings.admit([Self.seen("a.sock", "socket a.sock", "sim-1")], now: 9)
    #expect(again.serve.count == 1)
    #expect(!again.changed, "nothing new to save")
  }

  @Test func anotherIdentityClaimingABoundSerialIsAnAlarmForBoth() {
    // [SEC-GW-1]
    var bindings = TargetBindings()
    _ = bindings.admit([Self.seen("a.sock", "socket a.sock", "sim-1")], now: 1)
    let claimed = bindings.admit(
      [Self.seen("a.sock", "socket a.sock", "sim-1"), Self.seen("evil.sock", "socket evil.sock", "sim-1")],
      now: 2)
    #expect(claimed.serve.isEmpty, "neither the bound device nor the claimant is served")
    #expect(claimed.changed)
    #expect(
      claimed.alarms == [
        TargetBindings.Alarm(
          serial: "sim-1", identities: ["socket a.sock", "socket evil.sock"],
          devices: ["a.sock", "evil.sock"])
      ])
    #expect("\(claimed.alarms[0])".contains("otactl gateway --rebind sim-1"))
    #expect(bindings.identity(of: "sim-1") == nil)
    // The claimant gone, the alarm stands: the bound device alone is still not served, and the
    // alarm is said at every poll, its devices near or not.
    let later = bindings.admit([Self.seen("a.sock", "socket a.sock", "sim-1")], now: 3)
    #expect(later.serve.isEmpty)
    #expect(later.alarms.map(\.serial) == ["sim-1"])
    let away = bindings.admit([], now: 4)
    #expect(
      away.alarms == [
        TargetBindings.Alarm(serial: "sim-1", identities: ["socket a.sock", "socket evil.sock"], devices: [])
      ])
  }

  @Test func aLaterClaimantAloneIsAnAlarmToo() {
    var bindings = TargetBindings()
    _ = bindings.admit([Self.seen("AA", "address AA", "s")], now: 1)
    let claimed = bindings.admit([Self.seen("BB", "address BB", "s")], now: 2)
    #expect(claimed.serve.isEmpty)
    #expect(claimed.alarms.first?.identities == ["address AA", "address BB"])
  }

  @Test func twoIdentitiesSayingANewSerialAtOnceAreAnAlarmNotFirstComeFirstServed() {
    // [SEC-GW-1]
    var bindings = TargetBindings()
    let both = bindings.admit(
      [Self.seen("b.sock", "socket b.sock", "sim-2"), Self.seen("a.sock", "socket a.sock", "sim-2")], now: 1)
    #expect(both.serve.isEmpty)
    #expect(both.alarms.first?.identities == ["socket a.sock", "socket b.sock"])
    #expect(both.changed, "the alarm is kept")
  }

  @Test func oneDeviceReachedUnderTwoNamesIsServedOnce() {
    var bindings = TargetBindings()
    let result = bindings.admit(
      [Self.seen("AA:BB", "address AA:BB", "s"), Self.seen("aa:bb", "address AA:BB", "s")], now: 1)
    #expect(result.serve.map(\.device) == ["AA:BB"])
    #expect(result.alarms.isEmpty)
  }

  @Test func otherSerialsAreServedBesideAnAlarm() {
    var bindings = TargetBindings()
    let result = bindings.admit(
      [
        Self.seen("a", "socket a", "s1"), Self.seen("b", "socket b", "s1"), Self.seen("c", "socket c", "s2"),
      ], now: 1)
    #expect(result.serve.map(\.serial) == ["s2"])
    #expect(result.alarms.map(\.serial) == ["s1"])
  }

  @Test func forgettingASerialLetsTheNextDeviceBindIt() {
    var bindings = TargetBindings()
    _ = bindings.admit([Self.seen("a", "socket a", "s"), Self.seen("b", "socket b", "s")], now: 1)
    let forgot = bindings.forget("s")
    let again = bindings.forget("s")
    #expect(forgot && !again)
    let result = bindings.admit([Self.seen("b", "socket b", "s")], now: 2)
    #expect(result.serve.map(\.device) == ["b"])
    #expect(bindings.identity(of: "s") == "socket b")
  }

  @Test func theStoreKeepsBindingsAndAlarmsPrivatelyAndRefusesADamagedFile() throws {
    let folder = try TemporaryDirectory(label: "gateway-bindings")
    defer { folder.remove() }
    let store = BindingStore(directory: folder.path)
    #expect(try store.load() == TargetBindings(), "no file: nothing bound yet")
    var bindings = TargetBindings()
    _ = bindings.admit([Self.seen("a", "socket a", "s1"), Self.seen("b", "socket b", "s2")], now: 7)
    _ = bindings.admit([Self.seen("c", "socket c", "s2")], now: 8)
    try store.save(bindings)
    #expect(try store.load() == bindings)
    let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions]
    #expect((mode as? Int) == 0o600)
    try Data("{not json".utf8).write(to: URL(fileURLWithPath: store.path))
    #expect {
      try store.load()
    } throws: { error in
      "\(error)".contains("cannot be read") && "\(error)".contains("move the file away")
    }
  }
}
