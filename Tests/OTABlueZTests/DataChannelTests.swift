import Logging
import OTADBus
import OTALink
import OTASystem
import OTATestSupport
import OTAWire
import Testing

@testable import OTABlueZ

/// The L2CAP data channel without a radio: the device's rules (who may open it, which SDUs pass),
/// the central's choice of path, and the machine opening, using and leaving the channel.
@Suite struct DataChannelTests {
  typealias Script = BlueZScript
  static let central = BluetoothAddress(parsing: "11:22:33:44:55:66")
  static let stranger = BluetoothAddress(parsing: "66:55:44:33:22:11")

  // MARK: The device's rules

  @Test func onlyTheCentralConnectedOnGattMayOpenTheChannelAndOnlyOnce() throws {
    // [P-CHAN-3] [SEC-PAIR-2] [SEC-ATK-52]
    let central = try #require(Self.central)
    let stranger = try #require(Self.stranger)
    #expect(DataChannelRules.admit(peer: central, central: central, open: nil) == .accept)
    guard case .refuse(let why) = DataChannelRules.admit(peer: stranger, central: central, open: nil) else {
      Issue.record("a channel from another address was admitted")
      return
    }
    #expect(why.contains("66:55:44:33:22:11") && why.contains("11:22:33:44:55:66"))
    #expect(DataChannelRules.admit(peer: central, central: nil, open: nil) != .accept)
    #expect(DataChannelRules.admit(peer: central, central: central, open: central) != .accept)
  }

  @Test func sdusOfFourBytesOrFewerOrLongerThanTheMTUAreDropped() {
    // [P-CHAN-9] [SEC-LIMIT-2] [SEC-ATK-53]
    #expect(DataChannelRules.judge(count: 0) != .chunk)
    #expect(DataChannelRules.judge(count: 4) != .chunk)
    #expect(DataChannelRules.judge(count: 5) == .chunk)
    #expect(DataChannelRules.judge(count: Int(DataChannelRules.receiveMTU)) == .chunk)
    #expect(DataChannelRules.judge(count: Int(DataChannelRules.receiveMTU) + 1) != .chunk)
    #expect(DataChannelRules.judge(count: 300, receiveMTU: 299) != .chunk)
  }

  @Test func theCentralsAddressComesFromItsDevicePath() {
    #expect(DataChannelRules.address(ofDevice: "/org/bluez/hci0/dev_11_22_33_44_55_66") == Self.central)
    #expect(DataChannelRules.address(ofDevice: "/org/bluez/hci0") == nil)
    #expect(DataChannelRules.address(ofDevice: "/org/bluez/hci0/dev_11_22_33") == nil)
  }

  // MARK: The device's open channel (a Unix packet socket pair stands in for the kernel's CoC)

  /// The device's listener on a stand-in socket, with a channel from `central` open on one end of
  /// a packet socket pair; the other end is the central's.
  static func openChannel() throws -> (DataChannelListener, device: FileDescriptor, central: FileDescriptor) {
    let (stand, _) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    let listener = DataChannelListener(listener: stand, psm: 0x85, logger: Logger(label: "test"))
    let (device, central) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    listener.open(device, peer: try #require(Self.central))
    return (listener, device, central)
  }

  /// A listener whose accept fails (here: a socket that is not listening, as EMFILE would) leaves
  /// the poll set for a second instead of being polled, failing and logging on every turn.
  @Test func aFailingAcceptPausesTheListenerForASecond() throws {
    // [SEC-ATK-60]
    let (stand, _) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    let listener = DataChannelListener(listener: stand, psm: 0x85, logger: Logger(label: "test"))
    #expect(listener.descriptors == [stand.rawValue])
    #expect(listener.service(readable: [stand.rawValue], central: nil, now: .seconds(10)).isEmpty)
    #expect(listener.acceptsResumeAt == .seconds(11))
    #expect(listener.descriptors.isEmpty)
    _ = listener.service(readable: [stand.rawValue], central: nil, now: .milliseconds(10_500))
    #expect(listener.acceptsResumeAt == .seconds(11))
    _ = listener.service(readable: [], central: nil, now: .seconds(11))
    #expect(listener.acceptsResumeAt == nil && listener.descriptors == [stand.rawValue])
  }

  static func receive(_ socket: FileDescriptor) throws -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 8192)
    let count = try buffer.withUnsafeMutableBytes { bytes throws(SystemError) in
      try socket.receive(into: bytes, waiting: false)
    }
    return count.map { Array(buffer[0..<$0]) }
  }

  /// "A silent channel costs nothing ... and closes with its central's GATT connection".
  @Test func aChannelThatSaysNothingStaysIdleAndClosesWhenItsCentralLeaves() throws {
    // [P-CHAN-3] [P-CHAN-14] [SEC-ATK-56]
    let (listener, device, central) = try Self.openChannel()
    let address = try #require(Self.central)
    for _ in 0..<3 {
      #expect(listener.service(readable: [], central: address, now: .zero).isEmpty)
    }
    #expect(listener.peer == address && listener.descriptors.contains(device.rawValue))
    #expect(try Self.receive(central) == nil, "nothing was sent to the central, nothing closed")
    // The central leaves GATT: the channel goes with it, and the central's end sees it close.
    #expect(listener.service(readable: [], central: nil, now: .zero).isEmpty)
    #expect(listener.peer == nil && !listener.descriptors.contains(device.rawValue))
    #expect(try Self.receive(central) == [], "the device closed its end")
  }

  /// "One SDU is one data write ... The device sends nothing on the channel": SDUs become data
  /// writes, hostile ones are dropped, and nothing comes back for a central to read.
  @Test func sdusBecomeDataWritesAndNothingComesBack() throws {
    // [P-DATA-6] [P-CHAN-8] [P-CHAN-9] [SEC-ATK-53] [SEC-ATK-56] [SEC-ATK-57]
    let (listener, device, central) = try Self.openChannel()
    let address = try #require(Self.central)
    for sdu: [UInt8] in [[1, 0, 0, 0, 9], [1, 2, 3], Array(repeating: 7, count: 4101), [0, 0, 0, 0, 1, 2]] {
      _ = try sdu.withUnsafeBytes { bytes throws(SystemError) in try central.send(bytes, waiting: false) }
    }
    let events = listener.service(readable: [device.rawValue], central: address, now: .zero)
    #expect(events == [.dataWrite([1, 0, 0, 0, 9]), .dataWrite([0, 0, 0, 0, 1, 2])])
    #expect(try Self.receive(central) == nil)
    #expect(listener.peer == address)
  }

  /// A flood of short SDUs is dropped one by one but logged once as a warning, the rest at debug,
  /// and the count when the channel closes: a hostile central cannot flood the log.
  @Test func aFloodOfDropsIsOneWarningAndACountAtClose() throws {
    // [P-CHAN-9] [SEC-ATK-56]
    let lines = CapturedLog()
    let (stand, _) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    let listener = DataChannelListener(listener: stand, psm: 0x85, logger: lines.logger)
    let (device, central) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    let address = try #require(Self.central)
    listener.open(device, peer: address)
    for _ in 0..<10 {
      _ = try [UInt8]([1, 2, 3]).withUnsafeBytes { bytes throws(SystemError) in
        try central.send(bytes, waiting: false)
      }
    }
    #expect(listener.service(readable: [device.rawValue], central: address, now: .zero).isEmpty)
    #expect(listener.sdusDropped == 10)
    let warnings = lines.messages.filter { $0.hasPrefix("warning L2CAP SDU dropped") }
    let debugs = lines.messages.filter { $0.hasPrefix("debug L2CAP SDU dropped") }
    #expect(warnings.count == 1 && debugs.count == 9)
    listener.close()
    #expect(lines.messages.last == "warning L2CAP channel closed after 10 SDUs dropped")
  }

  // MARK: The central's choice

  @Test func autoTakesTheChannelWhenOfferedAndFallsBackWithAReason() {
    // [P-CHAN-12]
    #expect(DataPath.auto.choose(psm: 0x81, channelFailure: nil) == .channel(psm: 0x81))
    guard case .gatt(let none?) = DataPath.auto.choose(psm: 0, channelFailure: nil) else {
      Issue.record("auto without a PSM must say why it stays on GATT")
      return
    }
    #expect(none.contains("no L2CAP channel"))
    guard case .gatt(let failed?) = DataPath.auto.choose(psm: 0x81, channelFailure: "connect: EACCES") else {
      Issue.record("auto after a failed channel must stay on GATT and say why")
      return
    }
    #expect(failed.contains("EACCES"))
  }

  @Test func gattNeverOpensTheChannelAndL2CAPNeverFallsBack() {
    // [P-CHAN-12]
    #expect(DataPath.gatt.choose(psm: 0x81, channelFailure: nil) == .gatt(reason: nil))
    #expect(DataPath.l2cap.choose(psm: 0x81, channelFailure: nil) == .channel(psm: 0x81))
    if case .fail = DataPath.l2cap.choose(psm: 0, channelFailure: nil) {
    } else {
      Issue.record("l2cap without a PSM must fail")
    }
    if case .fail = DataPath.l2cap.choose(psm: 0x81, channelFailure: "refused") {
    } else {
      Issue.record("l2cap after a failed channel must fail")
    }
  }

  // MARK: The machine

  static func info(psm: UInt16, pairing: Bool = false) -> [UInt8] {
    InfoRecord(
      state: .idle, runningSlot: .a, flags: pairing ? [.pairingRequired] : [],
      slotVersions: SlotPair(
        a: Version(major: 1, minor: 0, revision: 0), b: Version(major: 0, minor: 0, revision: 0)),
      inactiveSlotContent: .unknown, slotCapacity: 1 << 20, windowCapacity: 65536, maxChunkPayload: 506,
      transfer: .idle, transferVersion: Version(major: 0, minor: 0, revision: 0), lastOutcome: .none,
      l2capPSM: psm
    ).encoded
  }

  /// Ready, then Info read with `info`: what the machine did with it.
  static func readInfo(_ info: [UInt8], path: DataPath, blockHashes: Bool = false) throws -> Script {
    var script = Script(dataPath: path)
    try script.connectToReady(blockHashes: blockHashes)
    _ = script.takeEmitted()
    script.feed(.readInfo)
    script.reply(.readInfo(offset: 0), [.bytes(info)])
    return script
  }

  @Test func autoOpensTheOfferedChannelBeforeHandingOnInfo() throws {
    // [P-CHAN-1]
    let info = Self.info(psm: 0x85, pairing: true)
    var script = try Self.readInfo(info, path: .auto)
    let endpoint = L2CAPEndpoint(address: try #require(Self.central), type: .lePublic, psm: 0x85)
    #expect(script.actions.contains(.openChannel(endpoint, security: .high)))
    #expect(script.takeEmitted().isEmpty, "Info waits for the channel: the sender sizes chunks by it")
    let parameters = L2CAPChannelParameters(sendMTU: 4100, receiveMTU: 672, phy: "2M", security: .medium)
    script.feed(.channelOpened(parameters))
    let report = DataChannelReport(psm: 0x85, parameters: parameters)
    #expect(script.takeEmitted() == [.dataChannelOpened(report), .info(info)])
    #expect(report.maxChunkPayload == 4096)
    script.feed(.writeData([1, 0, 0, 0, 9]))
    #expect(script.actions.last == .sendChannelData([[1, 0, 0, 0, 9]]))
    // At most 2 SDUs wait on the channel path (the WINDOW after them goes out over GATT at once).
    _ = script.takeEmitted()
    script.feed(.loopTurn)
    #expect(script.takeEmitted() == [.writable(1)])
    script.feed(.dataSent(count: 1))
    // A second Info read on the same connection does not open another channel.
    script.feed(.readInfo)
    script.reply(.readInfo(offset: 0), [.bytes(info)])
    #expect(script.takeEmitted() == [.info(info)])
    #expect(script.actions.filter { if case .openChannel = $0 { true } else { false } }.count == 1)
  }

  /// With operations the sender reads the block hashes after Info: over GATT, while the data (the
  /// operations, one per SDU) goes over the channel.
  @Test func theBlockHashesAreReadOverGattWhileTheChannelCarriesOperations() throws {
    // [P-CHAN-11]
    let info = Self.info(psm: 0x85)
    var script = try Self.readInfo(info, path: .auto, blockHashes: true)
    script.feed(.channelOpened(L2CAPChannelParameters(sendMTU: 4100)))
    _ = script.takeEmitted()
    script.feed(.readBlockHashes)
    let read = try #require(script.pending(.readBlockHashes(offset: 0))).request
    #expect(read.path == Script.blockHashes && read.method == "ReadValue")
    script.reply(.readBlockHashes(offset: 0), [.bytes([0, 2, 0, 0, 0, 0, 0, 0])])
    #expect(script.takeEmitted() == [.blockHashes([0, 2, 0, 0, 0, 0, 0, 0])])
    // A copy operation (target 0, kind 2, source 0, length 512) is one SDU like any data write.
    let copy: [UInt8] = [0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 2, 0, 0]
    script.feed(.writeData(copy))
    #expect(script.actions.last == .sendChannelData([copy]))
  }

  @Test func aChannelThatCannotOpenLeavesAutoOnGattWithALogLine() throws {
    // [P-CHAN-12]
    let info = Self.info(psm: 0x85)
    var script = try Self.readInfo(info, path: .auto)
    script.feed(.channelFailed("connect: EACCES"))
    #expect(script.takeEmitted() == [.info(info)])
    #expect(
      script.actions.contains(.log(.warning, "the L2CAP channel failed (connect: EACCES): data over GATT")))
    script.feed(.writeData([1, 0, 0, 0, 9]))
    #expect(script.actions.last == .sendData([[1, 0, 0, 0, 9]]))
    #expect(script.machine.channelFailure == "connect: EACCES")
  }

  @Test func aChannelThatDropsIsALostConnectionAndTheNextOneStaysOnGatt() throws {
    // [P-CHAN-11] [P-CHAN-12]
    var script = try Self.readInfo(Self.info(psm: 0x85), path: .auto)
    script.feed(.channelOpened(L2CAPChannelParameters(sendMTU: 4100)))
    _ = script.takeEmitted()
    script.feed(.channelDropped("send failed: ECONNRESET"))
    #expect(script.takeEmitted() == [.disconnected("the L2CAP channel dropped: send failed: ECONNRESET")])
    #expect(script.actions.contains(.closeChannel))
    #expect(
      DataPath.auto.choose(psm: 0x85, channelFailure: script.machine.channelFailure) != .channel(psm: 0x85))
  }

  /// A device that returns no credits: the channel takes nothing while SDUs wait. After
  /// `dataStallTimeout` without progress the channel is dropped with a log line and the push
  /// reconnects over GATT; any progress starts the clock again, an empty queue stops it.
  @Test func aChannelThatTakesNothingIsDroppedAfterTheStallTimeout() throws {
    // [P-CHAN-13] [SEC-ATK-58]
    var script = try Self.readInfo(Self.info(psm: 0x85), path: .auto)
    script.feed(.channelOpened(L2CAPChannelParameters(sendMTU: 4100)))
    _ = script.takeEmitted()
    script.feed(.writeData([1, 0, 0, 0, 9]))
    script.feed(.writeData([2, 0, 0, 0, 9]))
    script.feed(.dataSent(count: 1))
    #expect(script.actions.contains(.startTimer(.dataStall, after: .seconds(10))))
    script.feed(.dataSent(count: 1))
    #expect(script.actions.last == .stopTimer(.dataStall), "nothing waits: no stall clock")
    script.feed(.writeData([3, 0, 0, 0, 9]))
    script.feed(.dataSent(count: 0))
    #expect(script.machine.runningTimers.contains(.dataStall))
    // Looking again for room while nothing moves does not restart the clock.
    let starts = script.actions.filter { $0 == .startTimer(.dataStall, after: .seconds(10)) }.count
    script.feed(.timerFired(.socketRoom))
    script.feed(.dataSent(count: 0))
    #expect(script.actions.filter { $0 == .startTimer(.dataStall, after: .seconds(10)) }.count == starts)
    script.feed(.timerFired(.dataStall))
    #expect(
      script.takeEmitted() == [.disconnected("the L2CAP channel dropped: nothing taken for 10 s, 1 waiting")])
    #expect(script.actions.contains(.closeChannel))
    #expect(
      script.actions.contains(
        .log(
          .warning,
          "the L2CAP channel dropped (nothing taken for 10 s, 1 waiting): reconnecting to go on over GATT")))
    #expect(
      DataPath.auto.choose(psm: 0x85, channelFailure: script.machine.channelFailure) != .channel(psm: 0x85))
  }

  /// The same clock guards bluetoothd's data socket: a socket that takes nothing loses the link.
  @Test func aDataSocketThatTakesNothingLosesTheLink() throws {
    // [SEC-ATK-58]
    var script = Script()
    try script.connectToReady()
    _ = script.takeEmitted()
    script.feed(.writeData([1, 0, 0, 0, 9]))
    script.feed(.dataSent(count: 0))
    script.feed(.timerFired(.dataStall))
    #expect(
      script.takeEmitted() == [.disconnected("the data socket stalled: nothing taken for 10 s, 1 waiting")])
  }

  @Test func l2capWithoutAnOfferIsAFailureAndGattNeverAsks() throws {
    // [P-CHAN-12]
    var strict = try Self.readInfo(Self.info(psm: 0), path: .l2cap)
    #expect(strict.takeEmitted() == [.disconnected("the device offers no L2CAP channel (Info PSM 0)")])
    var gatt = try Self.readInfo(Self.info(psm: 0x85), path: .gatt)
    #expect(gatt.takeEmitted() == [.info(Self.info(psm: 0x85))])
    #expect(!gatt.actions.contains { if case .openChannel = $0 { true } else { false } })
  }

  @Test func anOlderDeviceWithoutThePSMFieldStaysOnGatt() throws {
    let old = Array(Self.info(psm: 0x85).prefix(78))
    var script = try Self.readInfo(old, path: .auto)
    #expect(script.takeEmitted() == [.info(old)])
  }
}
