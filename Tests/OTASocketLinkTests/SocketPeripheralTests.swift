import Foundation
import OTALink
import OTASystem
import OTASystemTesting
import Testing

@testable import OTASocketLink

/// The device's end of the simulated link against clients that break its rules, in one process: the
/// test plays the loop (it passes the time, so the hello timeout needs no waiting) and the client.
@Suite struct SocketPeripheralTests {
  static let info = Array(repeating: UInt8(0x5A), count: 70)

  func makePeripheral(_ limits: SocketPeripheral.Limits = .init()) throws -> SocketPeripheral {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("link-\(UUID().uuidString).sock")
    return try SocketPeripheral(path: path.path, conditions: LinkConditions(), limits: limits)
  }

  /// One turn of the loop: what is ready now (without waiting), then `service`.
  func turn(_ peripheral: SocketPeripheral, now: Duration) throws -> [PeripheralEvent] {
    let ready = try Poller.wait(
      for: peripheral.descriptors, writable: peripheral.writeDescriptors, timeout: .milliseconds(20))
    return try peripheral.service(readable: ready, now: now) { _, _ in Self.info }
  }

  /// The frames a client received (waits up to a second for the first bytes).
  func frames(on socket: UnixSocket) throws -> [LinkFrame] {
    var decoder = FrameDecoder()
    guard try !Poller.wait(for: [socket.descriptor], timeout: .seconds(1)).isEmpty else { return [] }
    decoder.append(try socket.read())
    var frames: [LinkFrame] = []
    while let frame = try decoder.next() { frames.append(frame) }
    return frames
  }

  @Test func outgoingQueueTakesWholeFramesUpToItsLimit() {
    var queue = OutgoingQueue(limit: 10)
    let first = queue.append([1, 2, 3, 4, 5, 6])
    let tooMuch = queue.append([7, 8, 9, 10, 11])
    #expect(first && !tooMuch, "11 bytes would be past the limit")
    #expect(queue.count == 6, "a refused frame adds nothing")
    let upToTheLimit = queue.append([7, 8, 9, 10])
    #expect(upToTheLimit)
    queue.consume(4)
    #expect(Array(queue.pending) == [5, 6, 7, 8, 9, 10])
    let afterConsuming = queue.append([11, 12, 13, 14])
    #expect(afterConsuming)
    queue.consume(100)
    #expect(queue.isEmpty)
  }

  @Test func aConnectionSilentPastTheHelloTimeoutIsDroppedAndTheNextIsServed() throws {
    // [P-SESS-3] [P-TIME-12] [SEC-ATK-47]
    let peripheral = try makePeripheral(.init(helloTimeout: .seconds(3)))
    let hog = try UnixSocket.connect(to: peripheral.path)
    #expect(try turn(peripheral, now: .zero).isEmpty)
    #expect(peripheral.nextDeadline == .seconds(3), "the loop wakes when the hello is due")

    let second = try UnixSocket.connect(to: peripheral.path)
    #expect(try turn(peripheral, now: .seconds(1)).isEmpty)
    #expect(
      try frames(on: second) == [.busy], "the silent connection holds the device until its hello is due")

    let events = try turn(peripheral, now: .seconds(3))
    #expect(events.count == 1)
    guard case .droppedPeer(let why) = events.first else {
      Issue.record("expected a dropped peer, got \(events)")
      return
    }
    #expect(why.contains("pid \(getpid())") && why.contains("sent no hello within 3"), "\(why)")
    #expect(try hog.read().isEmpty, "the hog's socket is closed")
    #expect(peripheral.nextDeadline == nil)

    let central = try UnixSocket.connect(to: peripheral.path)
    try central.send(.hello(mtu: 247))
    #expect(try turn(peripheral, now: .seconds(4)) == [.connected(mtu: 247)])
    #expect(try frames(on: central) == [.welcome(mtu: 247)])
    #expect(
      try turn(peripheral, now: .seconds(30)).isEmpty, "a central that said hello has no hello deadline")
  }

  /// The deadline is judged after reading: a hello that arrived in time but waited while the loop
  /// was busy elsewhere (a long VALIDATE) still counts.
  @Test func aHelloThatWaitedWhileTheLoopWasBusyStillCounts() throws {
    let peripheral = try makePeripheral(.init(helloTimeout: .seconds(3)))
    let central = try UnixSocket.connect(to: peripheral.path)
    #expect(try turn(peripheral, now: .zero).isEmpty)
    try central.send(.hello(mtu: 100))
    #expect(try turn(peripheral, now: .seconds(10)) == [.connected(mtu: 100)])
    #expect(try frames(on: central) == [.welcome(mtu: 100)])
  }

  /// Saying hello and then nothing holds the device as surely as saying nothing: after
  /// `idleTimeout` of silence the central is dropped; each frame it sends restarts the count.
  @Test func aCentralSilentAfterItsHelloIsDroppedAfterTheIdleTimeout() throws {
    // [P-TIME-12] [SEC-LIMIT-4] [SEC-ATK-48]
    let peripheral = try makePeripheral(.init(idleTimeout: .seconds(30)))
    let central = try UnixSocket.connect(to: peripheral.path)
    try central.send(.hello(mtu: 247))
    #expect(try turn(peripheral, now: .zero) == [.connected(mtu: 247)])
    #expect(peripheral.nextDeadline == .seconds(30))
    try central.send(.readRequest(handle: Characteristic.info.rawValue, offset: 0))
    #expect(try turn(peripheral, now: .seconds(29)).isEmpty)
    #expect(peripheral.nextDeadline == .seconds(59), "the read restarted the count")
    #expect(try turn(peripheral, now: .seconds(58)).isEmpty)
    let events = try turn(peripheral, now: .seconds(59))
    #expect(events.count == 2 && events.last == .disconnected, "\(events)")
    guard case .droppedPeer(let why) = events.first else {
      Issue.record("expected a dropped peer, got \(events)")
      return
    }
    #expect(why.contains("sent nothing for 30"), "\(why)")
  }

  /// A central waiting for the device (a VALIDATE that takes long: the loop answers late) is not
  /// silent: its count starts at the loop's first turn after the answer.
  @Test func aCentralWaitingOnTheDeviceIsNotCountedSilent() throws {
    // [P-TIME-12] [SEC-ATK-48]
    let peripheral = try makePeripheral(.init(idleTimeout: .seconds(30)))
    let central = try UnixSocket.connect(to: peripheral.path)
    try central.send(.hello(mtu: 247))
    #expect(try turn(peripheral, now: .zero) == [.connected(mtu: 247)])
    peripheral.notify([0x60, 0x04, 0x00])
    #expect(try turn(peripheral, now: .seconds(100)).isEmpty, "answered just now")
    #expect(try turn(peripheral, now: .seconds(129)).isEmpty)
    #expect(try turn(peripheral, now: .seconds(130)).last == .disconnected)
    _ = central
  }

  @Test func aCentralThatNeverReadsIsDroppedOnceItsAnswersFillTheQueue() throws {
    // [SEC-LIMIT-4] [SEC-ATK-49]
    let peripheral = try makePeripheral(.init(outgoingBytes: 4096))
    let flooder = try UnixSocket.connect(to: peripheral.path)
    try flooder.send(.hello(mtu: 247))
    #expect(try turn(peripheral, now: .zero) == [.connected(mtu: 247)])
    let reads = Array(
      repeating: LinkFrame.readRequest(handle: Characteristic.info.rawValue, offset: 0).encoded, count: 100
    )
    .flatMap { $0 }
    var events: [PeripheralEvent] = []
    var queued = false
    for round in 1...2000 where events.isEmpty {
      try flooder.write(reads)
      events = try turn(peripheral, now: .milliseconds(round))
      queued = queued || !peripheral.writeDescriptors.isEmpty
    }
    #expect(queued, "answers waited in the queue (and the loop polled the socket for writing)")
    #expect(events.count == 2, "\(events)")
    guard case .droppedPeer(let why) = events.first else {
      Issue.record("expected a dropped peer, got \(events)")
      return
    }
    #expect(why.contains("stopped reading"), "\(why)")
    #expect(events.last == .disconnected)
    #expect(peripheral.descriptors.count == 1, "only the listener is left")
  }

  @Test func aNotificationThatFindsTheQueueFullDropsTheCentral() throws {
    // [SEC-ATK-49]
    let peripheral = try makePeripheral(.init(outgoingBytes: 2048))
    let central = try UnixSocket.connect(to: peripheral.path)
    try central.send(.hello(mtu: 247))
    #expect(try turn(peripheral, now: .zero) == [.connected(mtu: 247)])
    var sent = 0
    while peripheral.nextDeadline != .zero, sent < 100_000 {
      peripheral.notify(Array(repeating: 0x60, count: 200))
      sent += 1
    }
    #expect(peripheral.nextDeadline == .zero, "the drop is reported at the next turn")
    let events = try turn(peripheral, now: .seconds(1))
    #expect(events.count == 2 && events.last == .disconnected, "\(events)")
    // What it did receive are whole notifications, in order, then the close.
    var decoder = FrameDecoder()
    var received = 0
    while try !Poller.wait(for: [central.descriptor], timeout: .seconds(1)).isEmpty {
      let bytes = try central.read()
      if bytes.isEmpty { break }
      decoder.append(bytes)
      while let frame = try decoder.next() {
        if case .notification = frame { received += 1 }
      }
    }
    #expect(received > 0 && received < sent)
  }
}

/// Nothing from a peer ends the daemon: an accept that fails (a client that went before it was
/// taken, otad out of descriptors) is never an error out of the loop.
@Suite struct SocketPeripheralAcceptTests {
  @Test func aFailingAcceptIsADroppedPeerAndPausesTheListenerForASecond() throws {
    // [SEC-LIMIT-5]
    let peripheral = try SocketPeripheralTests().makePeripheral()
    let listener = try #require(peripheral.descriptors.first)
    let client = try UnixSocket.connect(to: peripheral.path)
    defer { client.close() }
    // EMFILE (24): otad is out of descriptors.
    let trace = SystemCallTrace(rules: [.init(.accept, .fail(Errno(rawValue: 24)))])
    let events = try trace.run {
      try peripheral.service(readable: [listener], now: .seconds(10)) { _, _ in [] }
    }
    #expect(events.count == 1)
    guard case .droppedPeer(let why)? = events.first else {
      Issue.record("no dropped peer: \(events)")
      return
    }
    #expect(why.contains("accept failed") && why.contains("accepting again in 1.0 seconds"), "\(why)")
    #expect(!peripheral.descriptors.contains(listener), "the listener rests")
    #expect(peripheral.nextDeadline == .seconds(11))
    // A second later it listens again, and the client that waited is served.
    _ = try peripheral.service(readable: [], now: .seconds(11)) { _, _ in [] }
    #expect(peripheral.descriptors.first == listener)
    _ = try peripheral.service(readable: [listener], now: .seconds(11)) { _, _ in [] }
    #expect(peripheral.descriptors.count == 2, "the waiting client is the connection now")
  }
}
