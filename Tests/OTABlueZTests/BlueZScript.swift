import OTADBus
import OTALink
import OTASystem

@testable import OTABlueZ

#if canImport(Glibc)
  import Glibc
#endif

/// Plays bluetoothd's part against a `BlueZCentralMachine`, with no bus: remembers the calls the
/// machine started (and forgets the cancelled ones), answers them by what they are for, and
/// collects what the machine hands the sender.
struct BlueZScript {
  typealias Action = BlueZCentralMachine.Action

  static let adapter: DBusObjectPath = "/org/bluez/hci0"
  static let device: DBusObjectPath = "/org/bluez/hci0/dev_11_22_33_44_55_66"
  static let service = device.appending("service0010")
  static let control = service.appending("char0011")
  static let data = service.appending("char0013")
  static let info = service.appending("char0015")
  static let blockHashes = service.appending("char0017")
  /// The Device Information Service's identity strings (`connectToReady(identity:)`).
  static let deviceInformation = device.appending("service0020")
  static let identityPaths: [Characteristic: DBusObjectPath] = [
    .modelNumber: deviceInformation.appending("char0021"),
    .serialNumber: deviceInformation.appending("char0023"),
    .hardwareRevision: deviceInformation.appending("char0025"),
  ]

  var machine: BlueZCentralMachine
  /// Calls started and not yet answered or cancelled, oldest first.
  var outstanding: [(id: BlueZCallID, call: BlueZCall, request: BlueZRequest)] = []
  /// Calls sent without waiting for the answer.
  var sent: [BlueZRequest] = []
  /// What the machine handed the sender, since the last `takeEmitted`.
  var emitted: [CentralEvent] = []
  /// Every action, in order.
  var actions: [Action] = []

  init(selector: DeviceSelector = .anyOTADevice, queueDepth: Int = 8, dataPath: DataPath = .gatt) {
    machine = BlueZCentralMachine(
      configuration: .init(
        adapter: "hci0", selector: selector, queueDepth: queueDepth, commandsInFlight: 4, dataPath: dataPath))
  }

  @discardableResult
  mutating func feed(_ event: BlueZCentralMachine.Event) -> [Action] {
    let result = machine.handle(event)
    for action in result {
      switch action {
      case .call(let id, let call, let request): outstanding.append((id, call, request))
      case .cancel(let id): outstanding.removeAll { $0.id == id }
      case .send(let request): sent.append(request)
      case .emit(let event): emitted.append(event)
      default: break
      }
    }
    actions += result
    return result
  }

  /// The oldest outstanding call for `call`, if any.
  func pending(_ call: BlueZCall) -> (id: BlueZCallID, call: BlueZCall, request: BlueZRequest)? {
    outstanding.first { $0.call == call }
  }

  var outstandingCalls: [BlueZCall] { outstanding.map(\.call) }

  /// Answers the oldest outstanding `call` with `values`; the call must be outstanding.
  @discardableResult
  mutating func reply(_ call: BlueZCall, _ values: [DBusValue] = []) -> [Action] {
    answer(call, .success(values))
  }

  /// Answers the oldest outstanding `call` with an error reply.
  @discardableResult
  mutating func fail(_ call: BlueZCall, _ name: String, _ message: String = "") -> [Action] {
    answer(call, .failure(.named(name, message: message)))
  }

  private mutating func answer(_ call: BlueZCall, _ result: Result<[DBusValue], DBusError>) -> [Action] {
    guard let index = outstanding.firstIndex(where: { $0.call == call }) else {
      return feed(.replied(BlueZCallID(-1), result))
    }
    let id = outstanding.remove(at: index).id
    return feed(.replied(id, result))
  }

  mutating func takeEmitted() -> [CentralEvent] {
    defer { emitted = [] }
    return emitted
  }

  // MARK: Conversations

  /// From `connect` to a device found by InterfacesAdded, Connect answered.
  mutating func connectToDevice() {
    feed(.connect)
    reply(.setDiscoveryFilter)
    reply(.startDiscovery)
    reply(.listDevices, [Self.managedObjects([:])])
    feed(.signal(Self.interfacesAdded(Self.device, BlueZ.device, Self.deviceProperties())))
    reply(.connect(Self.device))
  }

  /// From `connect` to Connect called on a device BlueZ already knows (GetManagedObjects lists it).
  mutating func connectToKnownDevice() {
    feed(.connect)
    reply(.setDiscoveryFilter)
    reply(.startDiscovery)
    reply(.listDevices, [Self.managedObjects([Self.device: [BlueZ.device: Self.deviceProperties()]])])
  }

  /// After Connect: the services are resolved already, and GetManagedObjects lists `objects`.
  mutating func listCharacteristics(
    _ objects: [DBusObjectPath: [String: [String: DBusValue]]] = otaCharacteristics()
  )
    -> [Action]
  {
    reply(.checkServicesResolved(Self.device), [.vardict(Self.deviceProperties(servicesResolved: true))])
    return reply(.listCharacteristics, [Self.managedObjects(objects)])
  }

  /// All the way to `.connected`: the services resolve, the characteristics are listed,
  /// notifications started and the data socket acquired (MTU `mtu`) and adopted.
  /// `blockHashes`: the device has the running-slot block hashes characteristic (data operations);
  /// `identity`: the Device Information Service's identity strings it serves.
  mutating func connectToReady(
    mtu: UInt16 = 517, blockHashes: Bool = false, identity: [Characteristic] = []
  ) throws {
    connectToDevice()
    reply(.checkServicesResolved(Self.device), [.vardict(Self.deviceProperties(servicesResolved: false))])
    feed(.signal(Self.propertiesChanged(Self.device, BlueZ.device, ["ServicesResolved": .boolean(true)])))
    var characteristics = Self.otaCharacteristics()
    if blockHashes {
      characteristics[Self.blockHashes] = [BlueZ.gattCharacteristic: Self.characteristic(OTAUUID.blockHashes)]
    }
    for characteristic in identity {
      guard let path = Self.identityPaths[characteristic], let uuid = OTAUUID.identity[characteristic] else {
        continue
      }
      characteristics[path] = [BlueZ.gattCharacteristic: Self.characteristic(uuid)]
    }
    reply(.listCharacteristics, [Self.managedObjects(characteristics)])
    reply(.startNotify)
    reply(.acquireWrite, [.unixFD(try Self.socket()), .uint16(mtu)])
    feed(.dataSocketAdopted)
    feed(.dataSent(count: 1))
  }

  // MARK: bluetoothd's values

  static func deviceProperties(servicesResolved: Bool = false) -> [String: DBusValue] {
    [
      "Address": .string("11:22:33:44:55:66"), "Name": .string("ota-device"), "RSSI": .int16(-60),
      "UUIDs": .strings([OTAUUID.service]), "Connected": .boolean(servicesResolved),
      "ServicesResolved": .boolean(servicesResolved),
    ]
  }

  /// The three OTA characteristics (and a descriptor, which is not one) with the GATT interface.
  static func otaCharacteristics(leaving missing: String? = nil, dataMTU: UInt16? = nil)
    -> [DBusObjectPath: [String: [String: DBusValue]]]
  {
    var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [
      device: [BlueZ.device: deviceProperties(servicesResolved: true)],
      control.appending("desc0012"): [
        "org.bluez.GattDescriptor1": ["UUID": .string("00002902-0000-1000-8000-00805f9b34fb")]
      ],
    ]
    for (path, uuid) in [(control, OTAUUID.controlPoint), (data, OTAUUID.data), (info, OTAUUID.info)]
    where uuid != missing {
      objects[path] = [
        BlueZ.gattCharacteristic: characteristic(uuid, mtu: uuid == OTAUUID.data ? dataMTU : nil)
      ]
    }
    return objects
  }

  static func characteristic(_ uuid: String, mtu: UInt16? = nil) -> [String: DBusValue] {
    var properties: [String: DBusValue] = ["UUID": .string(uuid), "Flags": .strings(["read"])]
    if let mtu { properties["MTU"] = .uint16(mtu) }
    return properties
  }

  /// A GetManagedObjects answer, `a{oa{sa{sv}}}`.
  static func managedObjects(_ objects: [DBusObjectPath: [String: [String: DBusValue]]]) -> DBusValue {
    .dictionary(
      key: "o", value: "a{sa{sv}}",
      objects.sorted { $0.key < $1.key }.map { path, interfaces in
        DBusDictionaryEntry(.objectPath(path), interfaceDictionary(interfaces))
      })
  }

  static func interfaceDictionary(_ interfaces: [String: [String: DBusValue]]) -> DBusValue {
    .dictionary(
      key: "s", value: "a{sv}",
      interfaces.sorted { $0.key < $1.key }.map { DBusDictionaryEntry(.string($0.key), .vardict($0.value)) })
  }

  static func interfacesAdded(_ path: DBusObjectPath, _ interface: String, _ properties: [String: DBusValue])
    -> DBusSignal
  {
    DBusSignal(
      sender: ":1.1", path: .root, interface: DBusStandardInterface.objectManager, member: "InterfacesAdded",
      arguments: [.objectPath(path), interfaceDictionary([interface: properties])])
  }

  static func propertiesChanged(_ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue])
    -> DBusSignal
  {
    DBusSignal(
      sender: ":1.1", path: path, interface: DBusStandardInterface.properties, member: "PropertiesChanged",
      arguments: [.string(interface), .vardict(changed), .strings([])])
  }

  /// The bus says bluetoothd's name changed owner: `new` empty when bluetoothd went away.
  static func bluetoothdOwner(old: String, new: String) -> DBusSignal {
    DBusSignal(
      sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
      member: "NameOwnerChanged", arguments: [.string(BlueZ.service), .string(old), .string(new)])
  }

  /// A descriptor to stand for AcquireWrite's socket (the machine only passes it on).
  static func socket() throws -> DBusFileDescriptor {
    let descriptor = open("/dev/null", O_RDWR)
    guard descriptor >= 0 else {
      throw DBusError.system(operation: "open /dev/null", errno: Errno(rawValue: errno))
    }
    return DBusFileDescriptor(taking: descriptor)
  }
}
