import OTADBus
import OTASystem

#if canImport(Glibc)
  import Glibc
#endif

/// A BlueZ-shaped GATT application to export in the bus tests: a service and a characteristic below
/// an ObjectManager root, with the methods BlueZ calls (ReadValue, WriteValue, AcquireWrite) and a
/// handler state the tests can inspect afterwards.
final class Application {
  static let root: DBusObjectPath = "/org/blueota"
  static let service: DBusObjectPath = "/org/blueota/app/service0"
  static let characteristic: DBusObjectPath = "/org/blueota/app/service0/char0"
  static let serviceInterface = "org.bluez.GattService1"
  static let characteristicInterface = "org.bluez.GattCharacteristic1"
  static let serviceUUID = "0000fe59-0000-1000-8000-00805f9b34fb"
  static let characteristicUUID = "8ec90003-f315-4f60-9fb8-838830daea50"

  /// What WriteValue received.
  var written: [[UInt8]] = []
  /// What Set of Value received (through onSet).
  var setValues: [DBusValue] = []
  /// The ends of socketpairs AcquireWrite kept; the other ends went to the caller.
  var keptEnds: [DBusFileDescriptor] = []

  var serviceObject: DBusObject {
    DBusObject(
      path: Self.service,
      interfaces: [
        DBusInterface(
          Self.serviceInterface,
          properties: [
            DBusProperty("UUID", value: .string(Self.serviceUUID)),
            DBusProperty("Primary", value: .boolean(true)),
          ]
        )
      ])
  }

  var characteristicObject: DBusObject {
    DBusObject(
      path: Self.characteristic,
      interfaces: [
        DBusInterface(
          Self.characteristicInterface,
          methods: [
            DBusMethod(
              "ReadValue", inputs: [DBusArgument("options", "a{sv}")], outputs: [DBusArgument("value", "ay")]
            ) {
              _ in [.bytes([0x0A, 0x0B])]
            },
            DBusMethod("WriteValue", inputs: [DBusArgument("value", "ay"), DBusArgument("options", "a{sv}")])
            {
              [unowned self] call throws(DBusError) in
              guard let bytes = call.arguments[0].byteArray, bytes.count <= 4 else {
                throw .named("org.bluez.Error.InvalidValueLength", message: "at most 4 bytes")
              }
              written.append(bytes)
              return []
            },
            DBusMethod(
              "AcquireWrite", inputs: [DBusArgument("options", "a{sv}")],
              outputs: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]
            ) { [unowned self] _ throws(DBusError) in
              var ends: [Int32] = [-1, -1]
              guard
                socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends)
                  == 0
              else { throw .system(operation: "socketpair", errno: Errno(rawValue: errno)) }
              keptEnds.append(DBusFileDescriptor(taking: ends[0]))
              // The caller's end is closed here once the reply has been sent: libdbus sent a duplicate.
              return [.unixFD(DBusFileDescriptor(taking: ends[1])), .uint16(185)]
            },
            DBusMethod("Drain", inputs: [DBusArgument("fd", "h")], outputs: [DBusArgument("bytes", "ay")]) {
              call throws(DBusError) in
              guard let descriptor = call.arguments[0].fileDescriptor else {
                throw .invalidArgs("no descriptor")
              }
              var buffer = [UInt8](repeating: 0, count: 64)
              let count = read(descriptor.rawValue, &buffer, buffer.count)
              return [.bytes(Array(buffer.prefix(max(0, count))))]
            },
          ],
          properties: [
            DBusProperty("UUID", value: .string(Self.characteristicUUID)),
            DBusProperty("Flags", value: .strings(["read", "write-without-response"])),
            DBusProperty("Value", value: .bytes([0x01]), access: .readWrite) {
              [unowned self] value throws(DBusError) in
              guard (value.byteArray ?? []).count <= 4 else {
                throw .named("org.bluez.Error.InvalidValueLength", message: "at most 4 bytes")
              }
              setValues.append(value)
            },
            DBusProperty("Secret", value: .uint32(7), access: .write, emitsChangedSignal: false),
          ],
          signals: [DBusSignalDeclaration("Poked", arguments: [DBusArgument("count", "u")])])
      ])
  }

  /// Exports the root (an ObjectManager), the service and the characteristic on `connection`.
  func export(on connection: DBusConnection) throws(DBusError) {
    try connection.addObjectManager(at: Self.root)
    try connection.export(serviceObject)
    try connection.export(characteristicObject)
  }
}
