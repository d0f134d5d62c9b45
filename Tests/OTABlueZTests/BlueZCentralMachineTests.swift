import OTADBus
import OTALink
import Testing

@testable import OTABlueZ

/// The BlueZ central's machine against bluetoothd's replies and signals played by hand: the normal
/// way to ready, error replies, signals out of order, the long read of Info, the WriteValue fallback.
@Suite struct BlueZCentralMachineTests {
  typealias Script = BlueZScript

  @Test func aNormalConnectGoesFromDiscoveryToReady() throws {
    // [P-DATA-7]
    var script = Script()
    script.feed(.connect)
    #expect(script.actions.contains(.startTimer(.connectDeadline, after: .seconds(20))))
    let filter = try #require(script.pending(.setDiscoveryFilter)).request
    #expect(filter.path == Script.adapter && filter.method == "SetDiscoveryFilter")
    #expect(
      try filter.arguments.first?.vardict()["UUIDs"] == .strings([OTAUUID.service])
        && filter.arguments.first?.vardict()["Transport"] == .string("le"))
    // One call at a time: StartDiscovery only once the filter is set.
    #expect(script.outstandingCalls == [.setDiscoveryFilter])
    script.reply(.setDiscoveryFilter)
    #expect(script.outstandingCalls == [.startDiscovery])
    script.reply(.startDiscovery)
    #expect(script.outstandingCalls == [.listDevices])
    script.reply(.listDevices, [Script.managedObjects([:])])
    #expect(script.outstandingCalls.isEmpty)

    script.feed(.signal(Script.interfacesAdded(Script.device, BlueZ.device, Script.deviceProperties())))
    #expect(script.sent.map(\.method) == ["StopDiscovery"])
    let connect = try #require(script.pending(.connect(Script.device))).request
    #expect(connect.path == Script.device && connect.interface == BlueZ.device)
    script.reply(.connect(Script.device))
    script.reply(.checkServicesResolved(Script.device), [.vardict(Script.deviceProperties())])
    #expect(script.outstandingCalls.isEmpty)
    script.feed(
      .signal(Script.propertiesChanged(Script.device, BlueZ.device, ["ServicesResolved": .boolean(true)])))
    script.reply(.listCharacteristics, [Script.managedObjects(Script.otaCharacteristics())])
    #expect(script.pending(.startNotify)?.request.path == Script.control)
    script.reply(.startNotify)
    let acquire = try #require(script.pending(.acquireWrite)).request
    #expect(acquire.path == Script.data && acquire.method == "AcquireWrite")
    let socket = try Script.socket()
    let acquired = script.reply(.acquireWrite, [.unixFD(socket), .uint16(517)])
    #expect(acquired == [.adoptDataSocket(socket)])
    #expect(script.takeEmitted().isEmpty)

    let ready = script.feed(.dataSocketAdopted)
    // The socket is primed with one byte before the sender hears of the connection.
    #expect(ready.contains(.sendData([[0]])))
    #expect(ready.contains(.stopTimer(.connectDeadline)))
    #expect(script.takeEmitted() == [.connected(mtu: 517)])
    #expect(script.machine.isReady && script.machine.runningTimers.isEmpty)
  }

  @Test func aKnownDeviceIsConnectedToDirectly() throws {
    var script = Script()
    script.connectToKnownDevice()
    #expect(script.outstandingCalls == [.connect(Script.device)])
    #expect(script.machine.devices[Script.device]?["Address"] == .string("11:22:33:44:55:66"))
  }

  @Test func discoveryAlreadyUnderWayIsFine() {
    var script = Script()
    script.feed(.connect)
    script.fail(.setDiscoveryFilter, "org.bluez.Error.InProgress", "Operation already in progress")
    script.fail(.startDiscovery, "org.bluez.Error.InProgress", "Operation already in progress")
    #expect(script.outstandingCalls == [.listDevices])
    #expect(script.takeEmitted().isEmpty)
  }

  /// Linux drops the reports that come before its discovery is marked as finding, and the
  /// controller reports a device once per scan: a discovery that found nothing gives way to a
  /// fresh one (a new scan), and the one after that, until the connect deadline.
  @Test func aDiscoveryThatFindsNothingGivesWayToAFreshOne() throws {
    var script = Script()
    script.feed(.connect)
    script.reply(.setDiscoveryFilter)
    #expect(script.reply(.startDiscovery).contains(.startTimer(.freshDiscovery, after: BlueZ.discoveryRound)))
    script.reply(.listDevices, [Script.managedObjects([:])])
    for _ in 1...2 {
      script.feed(.timerFired(.freshDiscovery))
      let stop = try #require(script.pending(.endDiscoveryForAFreshOne)).request
      #expect(stop.path == Script.adapter && stop.method == "StopDiscovery")
      #expect(script.outstandingCalls == [.endDiscoveryForAFreshOne])
      script.reply(.endDiscoveryForAFreshOne)
      #expect(script.outstandingCalls == [.setDiscoveryFilter])
      script.reply(.setDiscoveryFilter)
      script.reply(.startDiscovery)
      script.reply(.listDevices, [Script.managedObjects([:])])
      #expect(script.machine.runningTimers == [.connectDeadline, .freshDiscovery])
    }
    // The device heard in the third discovery is connected to, and no fresh one follows.
    script.feed(.signal(Script.interfacesAdded(Script.device, BlueZ.device, Script.deviceProperties())))
    #expect(script.outstandingCalls == [.connect(Script.device)])
    #expect(script.machine.runningTimers == [.connectDeadline])
    script.feed(.timerFired(.freshDiscovery))
    #expect(script.outstandingCalls == [.connect(Script.device)])
    #expect(script.takeEmitted().isEmpty)
  }

  /// A discovery that found nothing, whose round just ran out: its StopDiscovery is under way.
  static func discoveryThatFoundNothingEnding() -> Script {
    var script = Script()
    script.feed(.connect)
    script.reply(.setDiscoveryFilter)
    script.reply(.startDiscovery)
    script.reply(.listDevices, [Script.managedObjects([:])])
    script.feed(.timerFired(.freshDiscovery))
    return script
  }

  @Test func aStopThatFailsStillStartsTheFreshDiscovery() {
    var script = Self.discoveryThatFoundNothingEnding()
    script.fail(.endDiscoveryForAFreshOne, "org.bluez.Error.Failed", "No discovery started")
    #expect(script.outstandingCalls == [.setDiscoveryFilter])
    #expect(script.takeEmitted().isEmpty)
  }

  @Test func aDeviceFoundWhileTheStopIsUnderWayIsConnectedToAndNoFreshDiscoveryStarts() {
    var script = Self.discoveryThatFoundNothingEnding()
    script.feed(.signal(Script.interfacesAdded(Script.device, BlueZ.device, Script.deviceProperties())))
    script.reply(.endDiscoveryForAFreshOne)
    #expect(script.outstandingCalls == [.connect(Script.device)])
    #expect(script.machine.phase == .connecting)
  }

  @Test func aDiscoveryThatCannotStartFails() {
    var script = Script()
    script.feed(.connect)
    script.reply(.setDiscoveryFilter)
    script.fail(.startDiscovery, "org.bluez.Error.NotReady", "Resource Not Ready")
    #expect(script.takeEmitted() == [.connectFailed("could not start discovery on hci0: Resource Not Ready")])
    #expect(script.machine.runningTimers.isEmpty && script.outstanding.isEmpty)
  }

  @Test func connectInProgressIsCalledAgainShortly() {
    var script = Script()
    script.connectToKnownDevice()
    let answer = script.fail(.connect(Script.device), "org.bluez.Error.InProgress", "In Progress")
    #expect(answer.contains(.startTimer(.connectAgain, after: .milliseconds(500))))
    #expect(script.takeEmitted().isEmpty && script.outstanding.isEmpty)
    #expect(!script.machine.staleDevices.contains(Script.device))
    script.feed(.timerFired(.connectAgain))
    #expect(script.outstandingCalls == [.connect(Script.device)])
    script.reply(.connect(Script.device))
    #expect(script.outstandingCalls == [.checkServicesResolved(Script.device)])
  }

  @Test func aFailedConnectForgetsTheDeviceAtTheNextAttempt() {
    var script = Script()
    script.feed(.connect)
    script.reply(.setDiscoveryFilter)
    script.reply(.startDiscovery)
    let known = Script.managedObjects([Script.device: [BlueZ.device: Script.deviceProperties()]])
    script.reply(.listDevices, [known])
    script.fail(.connect(Script.device), "org.bluez.Error.Failed", "le-connection-abort-by-local")
    #expect(script.takeEmitted() == [.connectFailed("connecting failed: le-connection-abort-by-local")])
    #expect(script.machine.staleDevices == [Script.device] && script.machine.runningTimers.isEmpty)

    script.sent = []
    script.feed(.connect)
    script.reply(.setDiscoveryFilter)
    script.reply(.startDiscovery)
    script.reply(.listDevices, [known])
    #expect(script.sent.map(\.method) == ["RemoveDevice"])
    #expect(script.sent.first?.arguments == [.objectPath(Script.device)])
    #expect(script.outstanding.isEmpty && script.machine.phase == .discovering)
  }

  /// ATT's Invalid Handle on set-up: the handles BlueZ cached are not the device's (its otad
  /// registered its application again). The VM saw a gateway fail every poll on them; the device
  /// is now forgotten at the next attempt, so discovery resolves its services afresh.
  @Test func anInvalidHandleForgetsTheDeviceAtTheNextAttempt() {
    var script = Script()
    script.connectToDevice()
    _ = script.listCharacteristics()
    #expect(script.outstandingCalls.contains(.startNotify))
    script.fail(.startNotify, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x01")
    #expect(
      script.takeEmitted() == [.connectFailed("StartNotify failed: Operation failed with ATT error: 0x01")])
    #expect(script.machine.staleDevices == [Script.device])

    script.sent = []
    script.feed(.connect)
    script.reply(.setDiscoveryFilter)
    script.reply(.startDiscovery)
    script.reply(
      .listDevices, [Script.managedObjects([Script.device: [BlueZ.device: Script.deviceProperties()]])])
    #expect(script.sent.map(\.method) == ["RemoveDevice"])
    // Another ATT error (here 0x0e, unlikely error) is no reason to forget the device.
    var other = Script()
    other.connectToDevice()
    _ = other.listCharacteristics()
    other.fail(.startNotify, "org.bluez.Error.Failed", "Operation failed with ATT error: 0x0e")
    #expect(other.machine.staleDevices.isEmpty)
  }

  @Test func noReplyToConnectFailsTheConnect() {
    var script = Script()
    script.connectToKnownDevice()
    script.fail(.connect(Script.device), DBusError.Name.noReply, "Did not receive a reply")
    #expect(script.takeEmitted() == [.connectFailed("connecting failed: Did not receive a reply")])
  }

  @Test func aLinkGoingDownDuringSetUpStartsOverUntilTheDeadline() throws {
    var script = Script()
    script.connectToDevice()
    _ = script.listCharacteristics()
    // bluetoothd's GATT client says "Not connected" under the generic Failed name.
    let answer = script.fail(.startNotify, "org.bluez.Error.Failed", "Not connected")
    #expect(answer.contains(.startTimer(.retryConnect, after: .milliseconds(500))))
    #expect(!answer.contains(.stopTimer(.connectDeadline)))
    #expect(script.takeEmitted().isEmpty)
    #expect(script.machine.runningTimers == [.connectDeadline, .retryConnect])
    script.feed(.timerFired(.retryConnect))
    #expect(script.outstandingCalls == [.setDiscoveryFilter])
    script.feed(.timerFired(.connectDeadline))
    #expect(
      script.takeEmitted() == [
        .connectFailed("no device matching any device offering the OTA service was found")
      ])
    #expect(script.sent.last?.method == "StopDiscovery")
  }

  @Test func servicesResolvedBeforeConnectedAndBeforeConnectsAnswer() {
    var script = Script()
    script.connectToKnownDevice()
    script.feed(
      .signal(Script.propertiesChanged(Script.device, BlueZ.device, ["ServicesResolved": .boolean(true)])))
    script.feed(.signal(Script.propertiesChanged(Script.device, BlueZ.device, ["Connected": .boolean(true)])))
    #expect(script.outstandingCalls == [.connect(Script.device)])
    script.reply(.connect(Script.device))
    script.reply(
      .checkServicesResolved(Script.device), [.vardict(Script.deviceProperties(servicesResolved: true))])
    #expect(script.outstandingCalls == [.listCharacteristics])
  }

  @Test func aCharacteristicAddedAfterServicesResolvedStillCounts() {
    var script = Script()
    script.connectToDevice()
    let listed = script.listCharacteristics(Script.otaCharacteristics(leaving: OTAUUID.info))
    #expect(listed.contains(.startTimer(.characteristicsLate, after: .seconds(1))))
    #expect(script.outstanding.isEmpty)
    let added = script.feed(
      .signal(
        Script.interfacesAdded(Script.info, BlueZ.gattCharacteristic, Script.characteristic(OTAUUID.info))))
    #expect(added.contains(.stopTimer(.characteristicsLate)))
    #expect(script.pending(.startNotify)?.request.path == Script.control)
  }

  @Test func characteristicsThatNeverComeFailTheConnect() {
    var script = Script()
    script.connectToDevice()
    script.listCharacteristics(Script.otaCharacteristics(leaving: OTAUUID.data))
    // A characteristic of another device does not help.
    script.feed(
      .signal(
        Script.interfacesAdded(
          "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service0010/char0013", BlueZ.gattCharacteristic,
          Script.characteristic(OTAUUID.data))))
    #expect(script.outstanding.isEmpty)
    script.feed(.timerFired(.characteristicsLate))
    #expect(script.takeEmitted() == [.connectFailed("the device does not offer the OTA characteristics")])
  }

  @Test func aDisconnectWhileACallIsPendingCancelsItAndStartsOver() throws {
    var script = Script()
    script.connectToDevice()
    _ = script.listCharacteristics()
    script.reply(.startNotify)
    let acquire = try #require(script.pending(.acquireWrite))
    let dropped = script.feed(
      .signal(Script.propertiesChanged(Script.device, BlueZ.device, ["Connected": .boolean(false)])))
    #expect(dropped.contains(.cancel(acquire.id)))
    #expect(dropped.contains(.startTimer(.retryConnect, after: .milliseconds(500))))
    #expect(script.takeEmitted().isEmpty)
    // The answer that was already on its way is not taken for the new attempt's.
    let late = script.feed(.replied(acquire.id, .success([.unixFD(try Script.socket()), .uint16(517)])))
    #expect(late.isEmpty)
    #expect(script.machine.phase == .idle)
  }

  @Test func controlWritesGoOneAtATimeAndAFailedOneIsReported() throws {
    // [P-WIN-9]
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(.writeControl([1, 2]))
    script.feed(.writeControl([3]))
    #expect(script.outstandingCalls == [.writeControl])
    let first = try #require(script.pending(.writeControl)).request
    #expect(first.path == Script.control && first.method == "WriteValue")
    #expect(first.arguments == [.bytes([1, 2]), .vardict(["type": .string("request")])])
    script.fail(.writeControl, "org.bluez.Error.NotConnected", "Not Connected")
    #expect(script.takeEmitted() == [.controlWriteFailed(0xFF)])
    #expect(script.pending(.writeControl)?.request.arguments.first == .bytes([3]))
    // Then the link goes: the sender hears it once, the socket is closed.
    let lost = script.feed(
      .signal(Script.propertiesChanged(Script.device, BlueZ.device, ["Connected": .boolean(false)])))
    #expect(lost.contains(.closeDataSocket))
    #expect(script.takeEmitted() == [.disconnected("the device disconnected")])
    #expect(script.outstanding.isEmpty)
  }

  @Test func dataGoesIntoTheSocketUntilItIsFullWithCreditForTheRest() throws {
    var script = Script(queueDepth: 8)
    try script.connectToReady()
    _ = script.takeEmitted()
    #expect(script.feed(.writeData([1])) == [.sendData([[1]])])
    let full = script.feed(.dataSent(count: 0))
    #expect(full.contains(.startTimer(.socketRoom, after: .milliseconds(2))))
    #expect(script.feed(.writeData([2])) == [.sendData([[1], [2]])])
    script.feed(.dataSent(count: 1))
    let turn = script.feed(.loopTurn)
    #expect(turn.contains(.sendData([[2]])))
    #expect(turn.contains(.emit(.writable(7))))
    script.feed(.dataSent(count: 1))
    #expect(script.feed(.loopTurn) == [.emit(.writable(8))])
    let broken = script.feed(.dataSocketFailed("the data socket closed"))
    #expect(broken.contains(.closeDataSocket))
    #expect(script.takeEmitted().last == .disconnected("the data socket closed"))
  }

  @Test func infoIsOneReadWhenTheAnswerIsShort() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(.readInfo)
    let read = try #require(script.pending(.readInfo(offset: 0))).request
    #expect(read.path == Script.info && read.arguments == [.vardict([:])])
    script.reply(.readInfo(offset: 0), [.bytes(Array(0..<40))])
    #expect(script.takeEmitted() == [.info(Array(0..<40))])
    #expect(script.outstanding.isEmpty)
  }

  @Test func theBlockHashesAreALongReadLikeInfo() throws {
    var script = Script()
    try script.connectToReady(mtu: 23, blockHashes: true)
    _ = script.takeEmitted()
    script.feed(.readBlockHashes)
    let read = try #require(script.pending(.readBlockHashes(offset: 0))).request
    #expect(read.path == Script.blockHashes)
    script.reply(.readBlockHashes(offset: 0), [.bytes(Array(repeating: 1, count: 22))])
    script.reply(.readBlockHashes(offset: 22), [.bytes([2, 3])])
    #expect(script.takeEmitted() == [.blockHashes(Array(repeating: 1, count: 22) + [2, 3])])
  }

  @Test func aDeviceWithoutBlockHashesAnswersNoneAtOnce() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(.readBlockHashes)
    #expect(script.takeEmitted() == [.blockHashes([])])
    #expect(script.outstanding.isEmpty)
  }

  @Test func aFailedReadOfTheBlockHashesIsNoneNotALostLink() throws {
    var script = Script()
    try script.connectToReady(blockHashes: true)
    _ = script.takeEmitted()
    script.feed(.readBlockHashes)
    script.fail(.readBlockHashes(offset: 0), "org.bluez.Error.NotPermitted", "Read not permitted")
    #expect(script.takeEmitted() == [.blockHashes([])])
  }

  @Test func theLongReadOfInfoGoesOnAcrossOffsets() throws {
    var script = Script()
    try script.connectToReady(mtu: 23)
    _ = script.takeEmitted()
    let value = (0..<49).map { UInt8($0) }
    script.feed(.readInfo)
    script.reply(.readInfo(offset: 0), [.bytes(Array(value[0..<22]))])
    let second = try #require(script.pending(.readInfo(offset: 22))).request
    #expect(second.arguments == [.vardict(["offset": .uint16(22)])])
    script.reply(.readInfo(offset: 22), [.bytes(Array(value[22..<44]))])
    #expect(script.takeEmitted().isEmpty)
    script.reply(.readInfo(offset: 44), [.bytes(Array(value[44...]))])
    #expect(script.takeEmitted() == [.info(value)])
  }

  @Test func aLongReadEndsAtAnInvalidOffset() throws {
    var script = Script()
    try script.connectToReady(mtu: 23)
    _ = script.takeEmitted()
    script.feed(.readInfo)
    script.reply(.readInfo(offset: 0), [.bytes(Array(repeating: 7, count: 22))])
    script.fail(.readInfo(offset: 22), "org.bluez.Error.InvalidOffset", "Invalid offset")
    #expect(script.takeEmitted() == [.info(Array(repeating: 7, count: 22))])
  }

  @Test func noReplyToReadingInfoDropsTheLink() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(.readInfo)
    script.fail(.readInfo(offset: 0), DBusError.Name.noReply, "Did not receive a reply")
    #expect(script.takeEmitted() == [.disconnected("reading Info failed: Did not receive a reply")])
  }

  @Test func acquireWriteRefusedFallsBackToWriteCommands() throws {
    var script = Script(queueDepth: 8)
    script.connectToDevice()
    script.listCharacteristics(Script.otaCharacteristics(dataMTU: 247))
    script.reply(.startNotify)
    let refused = script.fail(.acquireWrite, "org.bluez.Error.NotPermitted", "Write acquired")
    #expect(!refused.contains { if case .adoptDataSocket = $0 { true } else { false } })
    #expect(script.takeEmitted() == [.connected(mtu: 247)])
    // The prime goes as the first write command.
    let prime = try #require(script.pending(.writeData)).request
    #expect(prime.path == Script.data)
    #expect(prime.arguments == [.bytes([0]), .vardict(["type": .string("command")])])
    for byte in UInt8(1)...5 { script.feed(.writeData([byte])) }
    // Four in flight at most; the fifth and sixth wait.
    #expect(script.outstandingCalls == Array(repeating: .writeData, count: 4))
    script.feed(.loopTurn)
    #expect(script.takeEmitted() == [.writable(2)])
    script.reply(.writeData)
    #expect(
      script.outstanding.map { $0.request.arguments.first } == [4, 3, 2, 1].map { .bytes([UInt8(5 - $0)]) })
    script.fail(.writeData, "org.bluez.Error.Failed", "Operation failed")
    #expect(script.outstanding.last?.request.arguments.first == .bytes([5]))
    #expect(script.machine.isReady)
  }

  @Test func notificationsOnTheControlPointReachTheSender() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(
      .signal(Script.propertiesChanged(Script.info, BlueZ.gattCharacteristic, ["Value": .bytes([9])])))
    script.feed(
      .signal(Script.propertiesChanged(Script.control, BlueZ.gattCharacteristic, ["Value": .bytes([1, 0])])))
    #expect(script.takeEmitted() == [.notification([1, 0])])
  }

  @Test func disconnectingDropsTheLinkAndTellsTheSender() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    let actions = script.feed(.disconnect)
    #expect(actions.contains(.closeDataSocket))
    #expect(
      script.sent.last == BlueZRequest(path: Script.device, interface: BlueZ.device, method: "Disconnect"))
    #expect(script.takeEmitted() == [.disconnected("the central disconnected")])
    // Idle: nothing more to say.
    script.feed(.disconnect)
    #expect(script.takeEmitted().isEmpty)
  }

  @Test func losingTheBusWhileReadyIsADisconnect() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(.busLost)
    #expect(script.takeEmitted() == [.disconnected("the system bus connection was lost")])
  }

  /// bluetoothd 5.66 can die (docs/BLUEZ.md) and its supervisor start it again; its objects die with
  /// it, and no PropertiesChanged says the link went down. A central waiting for the device's restart
  /// after ACTIVATE waited for that signal until its deadline (a CI run of the multi-device VM run).
  @Test func bluetoothdGoingAwayWhileReadyIsADisconnect() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    let actions = script.feed(.signal(Script.bluetoothdOwner(old: ":1.4", new: "")))
    #expect(actions.contains(.closeDataSocket))
    #expect(script.takeEmitted() == [.disconnected("bluetoothd stopped")])
    #expect(script.machine.devices.isEmpty, "what the old bluetoothd said of its devices is gone with it")
    // Its return finds the central idle: the sender's next connect discovers afresh.
    script.feed(.signal(Script.bluetoothdOwner(old: "", new: ":1.9")))
    #expect(script.takeEmitted().isEmpty && script.machine.phase == .idle)
  }

  @Test func bluetoothdGoingAwayDuringSetUpStartsOverWithinTheDeadline() throws {
    var script = Script()
    script.connectToDevice()
    #expect(script.outstandingCalls == [.checkServicesResolved(Script.device)])
    script.feed(.signal(Script.bluetoothdOwner(old: ":1.4", new: "")))
    #expect(script.outstandingCalls.isEmpty && script.machine.phase == .idle)
    #expect(script.machine.runningTimers == [.connectDeadline, .retryConnect])
    #expect(script.takeEmitted().isEmpty, "not failed yet: bluetoothd is started again within seconds")
    script.feed(.signal(Script.bluetoothdOwner(old: "", new: ":1.9")))
    script.feed(.timerFired(.retryConnect))
    #expect(script.outstandingCalls == [.setDiscoveryFilter])
  }

  @Test func anotherNamesOwnerChangingIsNotBluetoothd() throws {
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(
      .signal(
        DBusSignal(
          sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
          member: "NameOwnerChanged", arguments: [.string("org.example"), .string(":1.7"), .string("")])))
    #expect(script.takeEmitted().isEmpty && script.machine.isReady)
  }

  @Test func anRSSIChangeOfAnUnknownDeviceAsksForItsProperties() {
    var script = Script()
    script.feed(.connect)
    script.reply(.setDiscoveryFilter)
    let changed = Script.propertiesChanged(Script.device, BlueZ.device, ["RSSI": .int16(-50)])
    script.feed(.signal(changed))
    script.feed(.signal(changed))
    #expect(script.outstandingCalls == [.startDiscovery, .deviceProperties(Script.device)])
    script.reply(.deviceProperties(Script.device), [.vardict(Script.deviceProperties())])
    #expect(script.outstandingCalls == [.startDiscovery, .connect(Script.device)])
    // Discovery's own answers no longer matter.
    script.reply(.startDiscovery)
    #expect(script.outstandingCalls == [.connect(Script.device)])
  }
}

@Suite struct BlueZErrorTests {
  @Test func errorsAreReadByTheirName() {
    let cases: [(String, String, BlueZError)] = [
      ("org.bluez.Error.InProgress", "In Progress", .inProgress),
      ("org.bluez.Error.Failed", "le-connection-abort-by-local", .failed),
      ("org.bluez.Error.Failed", "Not connected", .notConnected),
      ("org.bluez.Error.NotConnected", "", .notConnected),
      ("org.bluez.Error.NotPermitted", "Write acquired", .notPermitted),
      ("org.bluez.Error.NotSupported", "", .notSupported),
      ("org.bluez.Error.NotAuthorized", "", .notAuthorized),
      ("org.bluez.Error.InvalidOffset", "", .invalidOffset),
      ("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply", .noReply),
      ("org.freedesktop.DBus.Error.UnknownObject", "", .unknownObject),
      ("org.freedesktop.DBus.Error.ServiceUnknown", "", .unreachable),
      ("org.example.Error.Odd", "", .other("org.example.Error.Odd")),
    ]
    for (name, message, expected) in cases {
      #expect(BlueZError(.named(name, message: message)) == expected, "\(name): \(message)")
    }
    // A local failure has a standard name too.
    #expect(BlueZError(.disconnected) == .unreachable)
  }
}
