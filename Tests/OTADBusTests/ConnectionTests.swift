import DBusTestSupport
import Foundation
import Testing

@testable import OTADBus

/// Connections on a private bus: names, blocking calls, losing the bus, cleaning up.
@Suite(.enabled(if: PrivateBus.isAvailable)) struct ConnectionTests {
  let bus: PrivateBus

  init() throws { bus = try PrivateBus() }

  func nameHasOwner(_ name: String, on connection: DBusConnection) throws -> Bool {
    let values = try connection.call(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      method: "NameHasOwner", arguments: [.string(name)])
    return values == [.boolean(true)]
  }

  @Test func connectionsGetUniqueNamesAndCanOwnWellKnownOnes() throws {
    let first = try DBusConnection(address: bus.address)
    let second = try DBusConnection(address: bus.address)
    #expect(first.uniqueName.hasPrefix(":"))
    #expect(first.uniqueName != second.uniqueName)
    #expect(first.descriptor >= 0)
    #expect(first.isConnected)

    #expect(try first.requestName("org.blueota.Test") == .primaryOwner)
    #expect(try first.requestName("org.blueota.Test") == .alreadyOwner)
    #expect(try second.requestName("org.blueota.Test") == .exists)
    #expect(try second.requestName("org.blueota.Test", flags: []) == .inQueue)

    let owner = try second.call(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      method: "GetNameOwner", arguments: [.string("org.blueota.Test")])
    #expect(owner == [.string(first.uniqueName)])

    try first.releaseName("org.blueota.Test")
    let newOwner = try first.call(
      destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      method: "GetNameOwner", arguments: [.string("org.blueota.Test")])
    #expect(newOwner == [.string(second.uniqueName)])

    #expect(throws: DBusError.invalidValue("not a valid bus name: \"not a name\"")) {
      try first.requestName("not a name")
    }
  }

  @Test func blockingCallsReachAServerRunningItsOwnLoopOnAnotherThread() throws {
    let address = bus.address
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
      defer { finished.signal() }
      // The server connection is created, used and closed on this thread only.
      guard let server = try? DBusConnection(address: address) else { return }
      var running = true
      let calculator = DBusObject(
        path: "/org/blueota/calculator",
        interfaces: [
          DBusInterface(
            "org.blueota.Calculator",
            methods: [
              DBusMethod(
                "Add", inputs: [DBusArgument("a", "i"), DBusArgument("b", "i")],
                outputs: [DBusArgument("sum", "i")]
              ) {
                call throws(DBusError) in
                guard let a = call.arguments[0].int32Value, let b = call.arguments[1].int32Value else {
                  throw .invalidArgs("two integers")
                }
                let (sum, overflow) = a.addingReportingOverflow(b)
                guard !overflow else { throw .named("org.blueota.Error.Overflow", message: "\(a) + \(b)") }
                return [.int32(sum)]
              },
              DBusMethod("Stop") { _ in
                running = false
                return []
              },
            ])
        ])
      guard (try? server.export(calculator)) != nil,
        (try? server.requestName("org.blueota.Calculator")) != nil
      else {
        return
      }
      while running {
        waitReadable([server.descriptor], timeout: server.pollTimeout ?? .milliseconds(200))
        _ = server.process()
      }
      server.flush()
    }
    thread.start()

    let client = try DBusConnection(address: bus.address)
    let deadline = ContinuousClock.now + .seconds(5)
    while try !nameHasOwner("org.blueota.Calculator", on: client) {
      try #require(ContinuousClock.now < deadline)
      Thread.sleep(forTimeInterval: 0.01)
    }

    func add(_ a: Int32, _ b: Int32) throws(DBusError) -> [DBusValue] {
      try client.call(
        destination: "org.blueota.Calculator", path: "/org/blueota/calculator",
        interface: "org.blueota.Calculator",
        method: "Add", arguments: [.int32(a), .int32(b)], timeout: .seconds(5))
    }
    #expect(try add(2, 40) == [.int32(42)])
    #expect(throws: DBusError.named("org.blueota.Error.Overflow", message: "2147483647 + 1")) {
      try add(.max, 1)
    }
    #expect(throws: DBusError.self) {
      try client.call(
        destination: "org.blueota.Calculator", path: "/org/blueota/calculator",
        interface: "org.blueota.Calculator",
        method: "Subtract")
    }
    #expect(throws: DBusError.self) {
      try client.call(
        destination: "org.blueota.Nobody", path: "/", interface: "org.blueota.Calculator", method: "Add")
    }
    _ = try client.call(
      destination: "org.blueota.Calculator", path: "/org/blueota/calculator",
      interface: "org.blueota.Calculator",
      method: "Stop")
    #expect(finished.wait(timeout: .now() + 5) == .success)
  }

  @Test func unknownMethodsAndServicesAnswerWithTheirStandardNames() throws {
    let client = try DBusConnection(address: bus.address)
    do {
      _ = try client.call(
        destination: "org.blueota.Nobody", path: "/", interface: "org.blueota.X", method: "Y")
      Issue.record("a call to a missing service succeeded")
    } catch {
      #expect(error.name == DBusError.Name.serviceUnknown)
    }
    do {
      _ = try client.call(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
        method: "NoSuchMethod")
      Issue.record("an unknown method succeeded")
    } catch {
      #expect(error.name == DBusError.Name.unknownMethod)
    }
  }

  @Test func losingTheBusFailsPendingCallsAndReportsDisconnection() throws {
    let client = try DBusConnection(address: bus.address)
    let server = try DBusConnection(address: bus.address)
    let serial = try client.startCall(
      destination: server.uniqueName, path: "/", interface: "org.blueota.X", method: "Wait",
      timeout: .seconds(30))
    client.flush()
    bus.stop()
    let loop = TestLoop([client])
    try loop.run { loop.events[0].contains(.disconnected) }
    // The bus's NameAcquired signal, addressed to every new connection, may come first.
    let events = loop.events[0].filter { if case .signal = $0 { false } else { true } }
    #expect(events == [.reply(serial, .failure(.disconnected)), .disconnected])
    #expect(!client.isConnected)
    #expect(throws: DBusError.disconnected) {
      try client.startCall(destination: nil, path: "/", interface: nil, method: "M")
    }
  }

  @Test func closingReleasesWhatLibdbusHeld() throws {
    var connection: DBusConnection? = try DBusConnection(address: bus.address)
    try connection?.export(DBusObject(path: "/a", interfaces: [DBusInterface("org.blueota.A")]))
    weak let router = connection?.router
    #expect(router != nil)
    connection?.close()
    connection?.close()
    #expect(throws: DBusError.disconnected) { try connection?.requestName("org.blueota.A") }
    #expect(connection?.process() == [])
    connection = nil
    #expect(router == nil)
  }

  @Test func exportingTwiceAtOnePathIsRefused() throws {
    let connection = try DBusConnection(address: bus.address)
    let object = DBusObject(path: "/a", interfaces: [DBusInterface("org.blueota.A")])
    try connection.export(object)
    #expect(
      throws: DBusError.named(DBusError.Name.objectPathInUse, message: "an object is exported at /a already")
    ) {
      try connection.export(object)
    }
    #expect(throws: DBusError.invalidValue("not a valid interface name: \"bad\"")) {
      try connection.export(DBusObject(path: "/b", interfaces: [DBusInterface("bad")]))
    }
    connection.unexport("/a")
    try connection.export(object)
    #expect(connection.exportedPaths == ["/a"])
  }
  /// A bus that stops reading cannot hold the loop: `flush(within:)` gives up at its deadline with
  /// the bytes still queued, and they go out once the bus reads again.
  @Test func flushingToABusThatStoppedReadingGivesUpAtItsDeadline() throws {
    let connection = try DBusConnection(address: bus.address)
    let clock = ContinuousClock()
    bus.pause()
    defer { bus.resume() }
    let payload = DBusValue.bytes(Array(repeating: 0xA5, count: 1 << 20))
    for _ in 0..<8 {
      try connection.emit(
        signal: "Big", interface: "org.blueota.Test", path: "/org/blueota", arguments: [payload])
    }
    #expect(connection.outgoingBytes > 4 << 20, "more than any socket buffer holds waits")
    let started = clock.now
    let flushed = connection.flush(within: .milliseconds(300))
    let took = clock.now - started
    #expect(!flushed)
    #expect(took >= .milliseconds(300) && took < .seconds(2), "took \(took)")
    #expect(connection.outgoingBytes > 0)
    bus.resume()
    #expect(connection.flush(within: .seconds(20)), "the bus reads again: everything goes out")
    #expect(connection.outgoingBytes == 0)
  }
}
