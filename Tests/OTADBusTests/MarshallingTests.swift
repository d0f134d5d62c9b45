import Testing

@testable import OTADBus

#if canImport(Glibc)
  import Glibc
#endif

/// Values into a message and back out, with no bus: libdbus marshals into the message's buffer and
/// the reader parses that buffer, so a round trip checks both halves against libdbus itself.
@Suite struct MarshallingTests {
  func message() throws -> DBusMessage {
    try DBusMessage.methodCall(
      destination: "org.blueota.Test", path: "/org/blueota/test", interface: "org.blueota.Test",
      method: "Echo")
  }

  func roundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
    let message = try message()
    try message.append(values)
    #expect(message.signature == values.signature)
    return try message.arguments(expecting: values.signature)
  }

  @Test func everyBasicTypeRoundTripsWithItsSignature() throws {
    let values: [DBusValue] = [
      .byte(0xA5), .boolean(true), .boolean(false), .int16(-12345), .uint16(54321), .int32(-7),
      .uint32(0xDEAD_BEEF),
      .int64(.min), .uint64(.max), .double(-2.5), .string("grüße"), .string(""),
      .objectPath("/org/bluez/hci0"),
      .signature("a{sv}"),
    ]
    #expect(values.signature == "ybbnqiuxtdssog")
    #expect(try roundTrip(values) == values)
  }

  @Test func nestedContainersRoundTrip() throws {
    let characteristic: DBusValue = .vardict([
      "UUID": .string("0000fe59-0000-1000-8000-00805f9b34fb"),
      "Flags": .strings(["write-without-response", "notify"]),
      "Value": .bytes([1, 2, 3]),
    ])
    let managed: DBusValue = .dictionary(
      key: "o", value: "a{sa{sv}}",
      [
        DBusDictionaryEntry(
          .objectPath("/app/service0/char0"),
          .dictionary(
            key: "s", value: "a{sv}",
            [DBusDictionaryEntry(.string("org.bluez.GattCharacteristic1"), characteristic)])),
        DBusDictionaryEntry(.objectPath("/app/service0"), .dictionary(key: "s", value: "a{sv}", [])),
      ])
    let values: [DBusValue] = [
      managed,
      .structure([
        .uint32(7), .array("(ss)", [.structure([.string("a"), .string("b")])]), .variant(.int16(3)),
      ]),
      .array("aay", [.array("ay", [.bytes([0xFF]), .bytes([])]), .array("ay", [])]),
      .dictionary(key: "q", value: "ay", [DBusDictionaryEntry(.uint16(0x0059), .bytes([0xCA, 0xFE]))]),
    ]
    #expect(managed.signature == "a{oa{sa{sv}}}")
    #expect(values.signature == "a{oa{sa{sv}}}(ua(ss)v)aaaya{qay}")
    #expect(try roundTrip(values) == values)
  }

  @Test func emptyContainersKeepTheirElementTypes() throws {
    let values: [DBusValue] = [
      .array("s", []), .bytes([]), .vardict([:]), .array("a{sv}", []),
      .dictionary(key: "o", value: "a{sa{sv}}", []),
      .array("(iv)", []), .array("h", []),
    ]
    #expect(values.signature == "asaya{sv}aa{sv}a{oa{sa{sv}}}a(iv)ah")
    #expect(try roundTrip(values) == values)
  }

  @Test func variantsInsideVariantsRoundTrip() throws {
    let values: [DBusValue] = [
      .variant(.variant(.variant(.string("deep")))),
      .variant(.array("v", [.variant(.uint32(1)), .variant(.vardict(["k": .boolean(true)]))])),
      .variant(.structure([.variant(.objectPath("/")), .signature("")])),
    ]
    #expect(values.signature == "vvv")
    #expect(try roundTrip(values) == values)
  }

  @Test func largeByteArraysTakeTheFixedArrayPathBothWays() throws {
    let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let back = try roundTrip([.bytes(bytes), .string("after")])
    #expect(back.first?.byteArray == bytes)
    #expect(back.last == .string("after"))
  }

  @Test func readingWithAnotherSignatureIsATypedError() throws {
    let message = try message()
    try message.append([.string("x"), .uint32(1)])
    #expect(throws: DBusError.typeMismatch(expected: "si", found: "su")) {
      try message.arguments(expecting: "si")
    }
    #expect(throws: DBusError.typeMismatch(expected: "a{sv}", found: "s")) {
      try DBusValue.string("x").vardict()
    }
    #expect(throws: DBusError.typeMismatch(expected: "a{sv}", found: "a{ss}")) {
      try DBusValue.dictionary(key: "s", value: "s", []).vardict()
    }
    #expect(try DBusValue.vardict(["a": .int32(1)]).vardict() == ["a": .int32(1)])
    #expect(DBusError.typeMismatch(expected: "s", found: "u").name == DBusError.Name.invalidArgs)
  }

  @Test func valuesDBusCannotCarryAreRefusedBeforeTheMessageChanges() throws {
    let message = try message()
    let refused: [(DBusValue, DBusError)] = [
      (.string("a\0b"), .invalidValue("string contains a NUL byte")),
      (.objectPath("not/a/path"), .invalidValue("not a valid object path: \"not/a/path\"")),
      (.objectPath("/trailing/"), .invalidValue("not a valid object path: \"/trailing/\"")),
      (.signature("a{"), .invalidValue("not a valid signature: \"a{\"")),
      (.array("s", [.uint32(1)]), .typeMismatch(expected: "s", found: "u")),
      (.array("ss", []), .invalidValue("array element type is not one complete type: \"ss\"")),
      (.dictionary(key: "as", value: "s", []), .invalidValue("dictionary key type is not basic: \"as\"")),
      (
        .dictionary(key: "s", value: "v", [DBusDictionaryEntry(.string("k"), .string("v"))]),
        .typeMismatch(expected: "v", found: "s")
      ),
      (.structure([]), .invalidValue("a struct needs at least one field")),
      (.variant(.array("y", [.string("x")])), .typeMismatch(expected: "y", found: "s")),
    ]
    for (value, error) in refused {
      #expect(throws: error) { try message.append([.uint32(1), value]) }
    }
    #expect(message.signature == "")
    #expect(try message.arguments() == [])
  }

  @Test func badNamesAreRefusedWhenBuildingAMessage() {
    #expect(throws: DBusError.invalidValue("not a valid member name: \"Bad.Member\"")) {
      try DBusMessage.methodCall(destination: nil, path: "/", interface: nil, method: "Bad.Member")
    }
    #expect(throws: DBusError.invalidValue("not a valid interface name: \"nodots\"")) {
      try DBusMessage.methodCall(destination: nil, path: "/", interface: "nodots", method: "M")
    }
    #expect(throws: DBusError.invalidValue("not a valid bus name: \"no spaces allowed\"")) {
      try DBusMessage.methodCall(destination: "no spaces allowed", path: "/", interface: nil, method: "M")
    }
    #expect(throws: DBusError.invalidValue("not a valid object path: \"\"")) {
      try DBusMessage.signal(path: "", interface: "a.b", name: "S")
    }
  }

  @Test func aMethodCallCarriesItsHeader() throws {
    let message = try message()
    #expect(message.kind == .methodCall)
    #expect(message.destination == "org.blueota.Test")
    #expect(message.path == "/org/blueota/test")
    #expect(message.interface == "org.blueota.Test")
    #expect(message.member == "Echo")
    #expect(message.expectsReply)
    #expect(!message.containsFileDescriptors)
  }

  @Test func aDescriptorRoundTripsAsADuplicateOfTheSameFile() throws {
    var ends: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
    let mine = DBusFileDescriptor(taking: ends[0])
    let theirs = DBusFileDescriptor(taking: ends[1])
    let message = try message()
    try message.append([.variant(.unixFD(mine))])
    #expect(message.containsFileDescriptors)
    #expect(message.signature == "v")
    let back = try #require(try message.arguments().first?.variantValue?.fileDescriptor)
    #expect(back.rawValue != mine.rawValue)
    #expect(back == mine)
    #expect(back != theirs)
    let bytes: [UInt8] = [1, 2, 3]
    #expect(write(theirs.rawValue, bytes, bytes.count) == 3)
    var buffer = [UInt8](repeating: 0, count: 8)
    #expect(read(back.rawValue, &buffer, buffer.count) == 3)
    #expect(Array(buffer.prefix(3)) == bytes)
  }

  @Test func signaturesSplitIntoCompleteTypes() {
    let signature: DBusSignature = "sa{sv}as(ia{oi})vay"
    #expect(signature.completeTypes == ["s", "a{sv}", "as", "(ia{oi})", "v", "ay"])
    #expect(signature.isValid)
    #expect(!signature.isSingleCompleteType)
    #expect(DBusSignature("a{oa{sa{sv}}}").isSingleCompleteType)
    #expect(DBusSignature("a{oa{sa{sv}}}").dictionaryTypes?.value == "a{sa{sv}}")
    #expect(DBusSignature("(i").completeTypes == nil)
    #expect(DBusSignature("").completeTypes == [])
  }

  @Test func objectPathsKnowTheirFamily() {
    let path: DBusObjectPath = "/org/blueota/app"
    #expect(path.appending("service0") == "/org/blueota/app/service0")
    #expect(DBusObjectPath.root.appending("org") == "/org")
    #expect(path.isDescendant(of: "/org"))
    #expect(path.isDescendant(of: .root))
    #expect(!path.isDescendant(of: path))
    #expect(!DBusObjectPath("/org/blueotax").isDescendant(of: "/org/blueota"))
    #expect(path.childElement(below: .root) == "org")
    #expect(path.childElement(below: "/org") == "blueota")
  }

  @Test func matchRulesQuoteTheirValues() {
    let rule = DBusMatchRule.signals(
      sender: "org.bluez", pathNamespace: "/org/bluez", interface: DBusStandardInterface.properties,
      arg0: "it's")
    #expect(
      rule.rawValue
        == "type='signal',sender='org.bluez',path_namespace='/org/bluez',"
        + "interface='org.freedesktop.DBus.Properties',arg0='it'\\''s'")
  }
}
