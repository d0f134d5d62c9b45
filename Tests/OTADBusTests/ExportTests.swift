import DBusTestSupport
import Testing

@testable import OTADBus

#if canImport(Glibc)
  import Glibc
#endif

/// An exported object tree on a private bus, checked from a second connection. Both connections run
/// in one single-threaded loop, so every call from the client is asynchronous (`startCall`) and is
/// answered while the loop pumps both: the way otad's GATT server and client will share its loop.
@Suite(.enabled(if: PrivateBus.isAvailable)) struct ExportTests {
  let bus: PrivateBus
  let server: DBusConnection
  let client: DBusConnection
  let loop: TestLoop
  let application = Application()

  init() throws {
    bus = try PrivateBus()
    server = try DBusConnection(address: bus.address)
    client = try DBusConnection(address: bus.address)
    loop = TestLoop([server, client])
    try application.export(on: server)
  }

  func call(
    _ path: DBusObjectPath, _ interface: String?, _ method: String, _ arguments: [DBusValue] = []
  ) throws -> Result<[DBusValue], DBusError> {
    try loop.call(
      on: client, destination: server.uniqueName, path: path, interface: interface, method: method,
      arguments: arguments)
  }

  func errorName(_ result: Result<[DBusValue], DBusError>) -> String? {
    if case .failure(let error) = result { error.name } else { nil }
  }

  func introspect(_ path: DBusObjectPath) throws -> String {
    let values = try call(path, DBusStandardInterface.introspectable, "Introspect").get()
    return try #require(values.first?.stringValue)
  }

  @Test func introspectionListsInterfacesMembersAndChildren() throws {
    let root = try introspect("/")
    #expect(root.contains(#"<node name="org"/>"#))
    #expect(!root.contains(DBusStandardInterface.properties))

    let manager = try introspect(Application.root)
    #expect(manager.contains(#"<interface name="org.freedesktop.DBus.ObjectManager">"#))
    #expect(
      manager.contains(
        #"<arg name="objpath_interfaces_and_properties" type="a{oa{sa{sv}}}" direction="out"/>"#))
    #expect(manager.contains(#"<node name="app"/>"#))

    let service = try introspect(Application.service)
    #expect(service.contains(#"<interface name="org.bluez.GattService1">"#))
    #expect(service.contains(#"<property name="Primary" type="b" access="read"/>"#))
    #expect(service.contains(#"<node name="char0"/>"#))

    let characteristic = try introspect(Application.characteristic)
    #expect(characteristic.hasPrefix("<!DOCTYPE node PUBLIC"))
    #expect(characteristic.contains(#"<interface name="org.bluez.GattCharacteristic1">"#))
    #expect(characteristic.contains(#"<interface name="org.freedesktop.DBus.Properties">"#))
    #expect(
      characteristic.contains(
        """
            <method name="WriteValue">
              <arg name="value" type="ay" direction="in"/>
              <arg name="options" type="a{sv}" direction="in"/>
            </method>
        """))
    #expect(characteristic.contains(#"<arg name="fd" type="h" direction="out"/>"#))
    #expect(characteristic.contains(#"<property name="Value" type="ay" access="readwrite"/>"#))
    #expect(characteristic.contains(#"<property name="Secret" type="u" access="write"/>"#))
    #expect(characteristic.contains(#"<signal name="Poked">"#))
    #expect(!characteristic.contains("<node name="))

    // libdbus answers Peer itself, on any path, and introspection says so.
    #expect(characteristic.contains(#"<interface name="org.freedesktop.DBus.Peer">"#))
    #expect(try call(Application.characteristic, DBusStandardInterface.peer, "Ping").get() == [])
  }

  @Test func getManagedObjectsReturnsEveryObjectBelowTheRoot() throws {
    let values = try call(Application.root, DBusStandardInterface.objectManager, "GetManagedObjects").get()
    #expect(values.signature == "a{oa{sa{sv}}}")
    let expected: DBusValue = .dictionary(
      key: "o", value: "a{sa{sv}}",
      [
        DBusDictionaryEntry(
          .objectPath(Application.service),
          .dictionary(
            key: "s", value: "a{sv}",
            [
              DBusDictionaryEntry(
                .string(Application.serviceInterface),
                .vardict(["UUID": .string(Application.serviceUUID), "Primary": .boolean(true)]))
            ])),
        DBusDictionaryEntry(
          .objectPath(Application.characteristic),
          .dictionary(
            key: "s", value: "a{sv}",
            [
              DBusDictionaryEntry(
                .string(Application.characteristicInterface),
                .vardict([
                  "UUID": .string(Application.characteristicUUID),
                  "Flags": .strings(["read", "write-without-response"]), "Value": .bytes([0x01]),
                ]))
            ])),
      ])
    // The write-only Secret stays out, as it does from GetAll.
    #expect(values == [expected])

    // Only a root added with addObjectManager answers it.
    let elsewhere = try call(Application.service, DBusStandardInterface.objectManager, "GetManagedObjects")
    #expect(errorName(elsewhere) == DBusError.Name.unknownMethod)
  }

  @Test func propertiesCanBeReadAllReadAndSet() throws {
    let properties = DBusStandardInterface.properties
    let interface = DBusValue.string(Application.characteristicInterface)
    let path = Application.characteristic

    #expect(
      try call(path, properties, "Get", [interface, .string("UUID")]).get() == [
        .variant(.string(Application.characteristicUUID))
      ])
    let all = try #require(try call(path, properties, "GetAll", [interface]).get().first).vardict()
    #expect(all.keys.sorted() == ["Flags", "UUID", "Value"])

    #expect(
      try call(path, properties, "Set", [interface, .string("Value"), .variant(.bytes([9, 9]))]).get() == [])
    #expect(application.setValues == [.bytes([9, 9])])
    #expect(
      server.property("Value", interface: Application.characteristicInterface, path: path) == .bytes([9, 9]))
    #expect(
      try call(path, properties, "Get", [interface, .string("Value")]).get() == [.variant(.bytes([9, 9]))])

    let refusedByHandler = try call(
      path, properties, "Set", [interface, .string("Value"), .variant(.bytes([1, 2, 3, 4, 5]))])
    #expect(errorName(refusedByHandler) == "org.bluez.Error.InvalidValueLength")
    #expect(
      server.property("Value", interface: Application.characteristicInterface, path: path) == .bytes([9, 9]))

    let readOnly = try call(path, properties, "Set", [interface, .string("UUID"), .variant(.string("x"))])
    #expect(errorName(readOnly) == DBusError.Name.propertyReadOnly)
    let wrongType = try call(path, properties, "Set", [interface, .string("Value"), .variant(.string("x"))])
    #expect(errorName(wrongType) == DBusError.Name.invalidArgs)
    let writeOnly = try call(path, properties, "Get", [interface, .string("Secret")])
    #expect(errorName(writeOnly) == DBusError.Name.accessDenied)
    let unknown = try call(path, properties, "Get", [interface, .string("Nope")])
    #expect(errorName(unknown) == DBusError.Name.unknownProperty)
    let noInterface = try call(path, properties, "GetAll", [.string("org.example.Nothing")])
    #expect(errorName(noInterface) == DBusError.Name.unknownInterface)
    let badArguments = try call(path, properties, "Get", [interface])
    #expect(errorName(badArguments) == DBusError.Name.invalidArgs)
  }

  @Test func methodCallsRunTheirHandlersAndThrownErrorsBecomeErrorReplies() throws {
    let interface = Application.characteristicInterface
    let path = Application.characteristic
    let options = DBusValue.vardict(["offset": .uint16(0), "type": .string("request")])

    #expect(try call(path, interface, "WriteValue", [.bytes([1, 2]), options]).get() == [])
    #expect(application.written == [[1, 2]])
    #expect(try call(path, interface, "ReadValue", [options]).get() == [.bytes([0x0A, 0x0B])])
    // D-Bus allows leaving the interface out; the method is found by name.
    #expect(try call(path, nil, "ReadValue", [options]).get() == [.bytes([0x0A, 0x0B])])

    let tooLong = try call(path, interface, "WriteValue", [.bytes([1, 2, 3, 4, 5]), options])
    #expect(tooLong == .failure(.named("org.bluez.Error.InvalidValueLength", message: "at most 4 bytes")))
    #expect(application.written == [[1, 2]])

    #expect(errorName(try call(path, interface, "Explode")) == DBusError.Name.unknownMethod)
    #expect(
      errorName(try call(path, "org.example.Missing", "ReadValue", [options])) == DBusError.Name.unknownMethod
    )
    #expect(
      errorName(try call("/org/blueota/elsewhere", interface, "ReadValue", [options]))
        == DBusError.Name.unknownObject)
    #expect(errorName(try call(path, interface, "WriteValue", [.string("x")])) == DBusError.Name.invalidArgs)
  }

  @Test func signalsReachAClientThroughItsMatchRules() throws {
    try client.addMatch(.signals(sender: server.uniqueName, interface: DBusStandardInterface.properties))
    try client.addMatch(.signals(sender: server.uniqueName, interface: DBusStandardInterface.objectManager))
    try client.addMatch(.signals(sender: server.uniqueName, path: Application.characteristic))

    try server.setProperty(
      "Value", interface: Application.characteristicInterface, path: Application.characteristic,
      to: .bytes([7]))
    let changed = try loop.signal("PropertiesChanged", on: client)
    #expect(changed.sender == server.uniqueName)
    #expect(changed.path == Application.characteristic)
    #expect(changed.interface == DBusStandardInterface.properties)
    #expect(
      changed.arguments == [
        .string(Application.characteristicInterface), .vardict(["Value": .bytes([7])]), .strings([]),
      ])

    try server.emit(
      signal: "Poked", interface: Application.characteristicInterface, path: Application.characteristic,
      arguments: [.uint32(3)])
    #expect(try loop.signal("Poked", on: client).arguments == [.uint32(3)])

    let extra = DBusObject(
      path: "/org/blueota/app/service1",
      interfaces: [
        DBusInterface(
          Application.serviceInterface, properties: [DBusProperty("Primary", value: .boolean(false))])
      ])
    try server.export(extra)
    let added = try loop.signal("InterfacesAdded", on: client)
    #expect(added.path == Application.root)
    #expect(
      added.arguments == [
        .objectPath(extra.path),
        .dictionary(
          key: "s", value: "a{sv}",
          [DBusDictionaryEntry(.string(Application.serviceInterface), .vardict(["Primary": .boolean(false)]))]
        ),
      ])
    server.unexport(extra.path)
    let removed = try loop.signal("InterfacesRemoved", on: client)
    #expect(removed.arguments == [.objectPath(extra.path), .strings([Application.serviceInterface])])
    #expect(server.exportedPaths == [Application.service, Application.characteristic])

    #expect(throws: DBusError.typeMismatch(expected: "ay", found: "s")) {
      try server.setProperty(
        "Value", interface: Application.characteristicInterface, path: Application.characteristic,
        to: .string("x"))
    }
  }

  @Test func descriptorsPassInBothDirections() throws {
    let interface = Application.characteristicInterface
    let path = Application.characteristic
    let acquired = try call(path, interface, "AcquireWrite", [.vardict([:])]).get()
    #expect(acquired.signature == "hq")
    let received = try #require(acquired.first?.fileDescriptor)
    #expect(acquired.last == .uint16(185))
    let kept = try #require(application.keptEnds.first)
    #expect(received != kept)

    // The server's end and ours are the two ends of one socketpair.
    let packet: [UInt8] = [0x10, 0x20, 0x30]
    #expect(write(kept.rawValue, packet, packet.count) == packet.count)
    var buffer = [UInt8](repeating: 0, count: 16)
    #expect(read(received.rawValue, &buffer, buffer.count) == packet.count)
    #expect(Array(buffer.prefix(packet.count)) == packet)

    // And the other way: a descriptor we own goes to the server, which reads from it.
    var ends: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
    let ours = DBusFileDescriptor(taking: ends[0])
    let sent = DBusFileDescriptor(taking: ends[1])
    let bytes: [UInt8] = [0xAB, 0xCD]
    #expect(write(ours.rawValue, bytes, bytes.count) == bytes.count)
    let drained = try call(path, interface, "Drain", [.unixFD(sent)])
    #expect(drained == .success([.bytes(bytes)]))
  }

  @Test func aCallNobodyAnswersTimesOutThroughTheLoop() throws {
    // Only the client is pumped: the server never reads the call.
    let lonely = TestLoop([client])
    let result = try lonely.call(
      on: client, destination: server.uniqueName, path: Application.characteristic,
      interface: Application.characteristicInterface, method: "ReadValue", arguments: [.vardict([:])],
      timeout: .milliseconds(150))
    #expect(errorName(result) == DBusError.Name.noReply)
    #expect(client.pollTimeout == nil)
  }

  @Test func replyOrderFollowsTheSerialsOfInterleavedCalls() throws {
    let interface = Application.characteristicInterface
    var serials: [DBusSerial] = []
    for index in 0..<5 {
      serials.append(
        try client.startCall(
          destination: server.uniqueName, path: Application.characteristic, interface: interface,
          method: "WriteValue", arguments: [.bytes([UInt8(index)]), .vardict([:])]))
    }
    var replies: [DBusSerial] = []
    try loop.run {
      replies = loop.events[1].compactMap {
        if case .reply(let serial, .success) = $0 { serial } else { nil }
      }
      return replies.count == serials.count
    }
    #expect(replies == serials)
    #expect(application.written == (0..<5).map { [UInt8($0)] })
  }
}
