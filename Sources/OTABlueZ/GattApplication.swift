import OTADBus
import OTALink

/// The GATT application the device registers with BlueZ, as a plain value tree: the OTA service
/// (control point, data, Info, the L2CAP channel's PSM, the running slot's block hashes), the Device Information Service
/// (firmware revision, model number, serial number, hardware revision), the SMP service when `smp` is on, and the advertisement. Handlers
/// only record what the central did in `PeripheralInbox`; the link turns that into
/// `PeripheralEvent`s.
struct GattApplication {
  let root: DBusObjectPath
  let requireEncryption: Bool
  let localName: String
  var smp = false
  /// Nordic's Legacy and Secure DFU services (docs/NORDIC-DFU.md).
  var legacyDFU = false
  var secureDFU = false

  var otaService: DBusObjectPath { root.appending("service0") }
  var controlPoint: DBusObjectPath { otaService.appending("char0") }
  var data: DBusObjectPath { otaService.appending("char1") }
  var info: DBusObjectPath { otaService.appending("char2") }
  var l2capPSM: DBusObjectPath { otaService.appending("char3") }
  var blockHashes: DBusObjectPath { otaService.appending("char4") }
  var deviceInformation: DBusObjectPath { root.appending("service1") }
  var firmwareRevision: DBusObjectPath { deviceInformation.appending("char0") }
  var modelNumber: DBusObjectPath { deviceInformation.appending("char1") }
  var serialNumber: DBusObjectPath { deviceInformation.appending("char2") }
  var hardwareRevision: DBusObjectPath { deviceInformation.appending("char3") }
  var advertisement: DBusObjectPath { root.appending("advertisement0") }
  var smpService: DBusObjectPath { root.appending("service2") }
  var smpCharacteristic: DBusObjectPath { smpService.appending("char0") }
  var legacyDFUService: DBusObjectPath { root.appending("service3") }
  var legacyDFUControlPoint: DBusObjectPath { legacyDFUService.appending("char0") }
  var legacyDFUPacket: DBusObjectPath { legacyDFUService.appending("char1") }
  var legacyDFUVersion: DBusObjectPath { legacyDFUService.appending("char2") }
  var secureDFUService: DBusObjectPath { root.appending("service4") }
  var secureDFUControlPoint: DBusObjectPath { secureDFUService.appending("char0") }
  var secureDFUPacket: DBusObjectPath { secureDFUService.appending("char1") }

  func controlPoint(of service: NordicDFUService) -> DBusObjectPath {
    service == .legacy ? legacyDFUControlPoint : secureDFUControlPoint
  }

  func serves(_ service: NordicDFUService) -> Bool { service == .legacy ? legacyDFU : secureDFU }

  /// The write flag, or its encrypted, authenticated (bonded) form.
  private var write: String { requireEncryption ? "encrypt-authenticated-write" : "write" }

  func objects(_ inbox: PeripheralInbox) -> [DBusObject] {
    otaObjects(inbox) + (smp ? smpObjects(inbox) : []) + (legacyDFU ? legacyDFUObjects(inbox) : [])
      + (secureDFU ? secureDFUObjects(inbox) : [])
  }

  /// A Nordic DFU control point: written, notifying its answers.
  private func nordicDFUControlPoint(
    _ service: NordicDFUService, _ path: DBusObjectPath, uuid: String, in parent: DBusObjectPath,
    _ inbox: PeripheralInbox
  ) -> DBusObject {
    characteristic(
      path, uuid: uuid, service: parent, flags: [write, "notify"],
      extra: [DBusProperty("Notifying", value: .boolean(false)), DBusProperty("Value", value: .bytes([]))],
      methods: [
        writeValue { value, options in inbox.nordicDFUWrite(service, value, options, control: true) },
        DBusMethod("StartNotify") { _ in
          inbox.nordicDFUNotifying.insert(service)
          return []
        },
        DBusMethod("StopNotify") { _ in
          inbox.nordicDFUNotifying.remove(service)
          return []
        },
      ])
  }

  /// A Nordic DFU packet characteristic: written without response (or with).
  private func nordicDFUPacket(
    _ service: NordicDFUService, _ path: DBusObjectPath, uuid: String, in parent: DBusObjectPath,
    _ inbox: PeripheralInbox
  ) -> DBusObject {
    characteristic(
      path, uuid: uuid, service: parent, flags: ["write-without-response", write],
      methods: [
        writeValue { value, options in inbox.nordicDFUWrite(service, value, options, control: false) }
      ])
  }

  /// Nordic's Secure DFU, as SDK 12 and later's bootloader serves it: the control point and the
  /// packet characteristic. No buttonless characteristic: otad's DFU service is the bootloader
  /// already (docs/NORDIC-DFU.md). The same pairing rule.
  private func secureDFUObjects(_ inbox: PeripheralInbox) -> [DBusObject] {
    [
      service(secureDFUService, uuid: SecureDFUUUID.service),
      nordicDFUControlPoint(
        .secure, secureDFUControlPoint, uuid: SecureDFUUUID.controlPoint, in: secureDFUService, inbox),
      nordicDFUPacket(.secure, secureDFUPacket, uuid: SecureDFUUUID.packet, in: secureDFUService, inbox),
    ]
  }

  /// Nordic's Legacy DFU, as SDK 11's bootloader serves it: the control point (written, notifying),
  /// the packet characteristic (written without response, 20 bytes at a time by Nordic's clients),
  /// and the DFU Version (0x0008: the bootloader, so a client starts at once). The same pairing rule.
  private func legacyDFUObjects(_ inbox: PeripheralInbox) -> [DBusObject] {
    [
      service(legacyDFUService, uuid: LegacyDFUUUID.service),
      nordicDFUControlPoint(
        .legacy, legacyDFUControlPoint, uuid: LegacyDFUUUID.controlPoint, in: legacyDFUService, inbox),
      nordicDFUPacket(.legacy, legacyDFUPacket, uuid: LegacyDFUUUID.packet, in: legacyDFUService, inbox),
      characteristic(
        legacyDFUVersion, uuid: LegacyDFUUUID.version, service: legacyDFUService, flags: ["read"],
        methods: [
          DBusMethod(
            "ReadValue", inputs: [DBusArgument("options", "a{sv}")], outputs: [DBusArgument("value", "ay")]
          ) { _ in [.bytes(LegacyDFUUUID.versionValue)] }
        ]),
    ]
  }

  /// SMP over Bluetooth: one characteristic, written without response (or with), answered by
  /// notifications. No WriteAcquired: BlueZ 5.66 would then hand every write through one socket
  /// without saying which central wrote it, and SMP reassembles per central. The same pairing rule
  /// as the OTA service: with `requireEncryption`, only a bonded central writes.
  private func smpObjects(_ inbox: PeripheralInbox) -> [DBusObject] {
    [
      service(smpService, uuid: SMPUUID.service),
      characteristic(
        smpCharacteristic, uuid: SMPUUID.characteristic, service: smpService,
        flags: ["write-without-response", write, "notify"],
        extra: [DBusProperty("Notifying", value: .boolean(false)), DBusProperty("Value", value: .bytes([]))],
        methods: [
          writeValue { value, options in inbox.smpWrite(value, options) },
          DBusMethod("StartNotify") { _ in
            inbox.smpNotifying = true
            return []
          },
          DBusMethod("StopNotify") { _ in
            inbox.smpNotifying = false
            return []
          },
        ]),
    ]
  }

  private func otaObjects(_ inbox: PeripheralInbox) -> [DBusObject] {
    [
      service(otaService, uuid: OTAUUID.service),
      characteristic(
        controlPoint, uuid: OTAUUID.controlPoint, service: otaService, flags: [write, "notify"],
        extra: [DBusProperty("Notifying", value: .boolean(false)), DBusProperty("Value", value: .bytes([]))],
        methods: [
          writeValue { value, options throws(DBusError) in try inbox.controlWrite(value, options) },
          DBusMethod("StartNotify") { _ in
            inbox.notifying = true
            return []
          },
          DBusMethod("StopNotify") { _ in
            inbox.notifying = false
            return []
          },
        ]),
      // WriteAcquired: BlueZ hands every write to this characteristic through one socket (the fast
      // path); write-without-response is why a central may stream chunks.
      characteristic(
        data, uuid: OTAUUID.data, service: otaService, flags: ["write-without-response", write],
        extra: [DBusProperty("WriteAcquired", value: .boolean(false))],
        methods: [
          writeValue { value, options throws(DBusError) in try inbox.dataWrite(value, options) },
          DBusMethod(
            "AcquireWrite", inputs: [DBusArgument("options", "a{sv}")],
            outputs: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]
          ) { call throws(DBusError) in try inbox.acquireWrite(options(call)) },
        ]),
      characteristic(
        info, uuid: OTAUUID.info, service: otaService, flags: ["read"],
        methods: [readValue(.info, inbox)]),
      // The L2CAP data channel's PSM (u16 LE, 0: none), where Apple's convention publishes one.
      characteristic(
        l2capPSM, uuid: OTAUUID.l2capPSM, service: otaService, flags: ["read"],
        methods: [readValue(.l2capPSM, inbox)]),
      characteristic(
        blockHashes, uuid: OTAUUID.blockHashes, service: otaService, flags: ["read"],
        methods: [readValue(.blockHashes, inbox)]),
      service(deviceInformation, uuid: OTAUUID.deviceInformation),
      characteristic(
        firmwareRevision, uuid: OTAUUID.firmwareRevision, service: deviceInformation, flags: ["read"],
        methods: [readValue(.firmwareRevision, inbox)]),
      // Who the device is and what hardware it is (docs/PROTOCOL.md): read-only UTF-8 strings.
      characteristic(
        modelNumber, uuid: OTAUUID.modelNumber, service: deviceInformation, flags: ["read"],
        methods: [readValue(.modelNumber, inbox)]),
      characteristic(
        serialNumber, uuid: OTAUUID.serialNumber, service: deviceInformation, flags: ["read"],
        methods: [readValue(.serialNumber, inbox)]),
      characteristic(
        hardwareRevision, uuid: OTAUUID.hardwareRevision, service: deviceInformation, flags: ["read"],
        methods: [readValue(.hardwareRevision, inbox)]),
      DBusObject(
        path: advertisement,
        interfaces: [
          DBusInterface(
            BlueZ.advertisement,
            methods: [
              DBusMethod("Release") { _ in
                inbox.advertisementReleased = true
                return []
              }
            ],
            properties: [
              DBusProperty("Type", value: .string("peripheral")),
              DBusProperty("ServiceUUIDs", value: .strings([OTAUUID.service])),
              DBusProperty("LocalName", value: .string(localName)),
            ])
        ]),
    ]
  }

  private func service(_ path: DBusObjectPath, uuid: String) -> DBusObject {
    DBusObject(
      path: path,
      interfaces: [
        DBusInterface(
          BlueZ.gattService,
          properties: [
            DBusProperty("UUID", value: .string(uuid)), DBusProperty("Primary", value: .boolean(true)),
          ])
      ])
  }

  private func characteristic(
    _ path: DBusObjectPath, uuid: String, service: DBusObjectPath, flags: [String],
    extra: [DBusProperty] = [], methods: [DBusMethod]
  ) -> DBusObject {
    DBusObject(
      path: path,
      interfaces: [
        DBusInterface(
          BlueZ.gattCharacteristic, methods: methods,
          properties: [
            DBusProperty("UUID", value: .string(uuid)), DBusProperty("Service", value: .objectPath(service)),
            DBusProperty("Flags", value: .strings(flags)),
          ] + extra)
      ])
  }

  private func writeValue(_ body: @escaping ([UInt8], [String: DBusValue]) throws(DBusError) -> Void)
    -> DBusMethod
  {
    DBusMethod("WriteValue", inputs: [DBusArgument("value", "ay"), DBusArgument("options", "a{sv}")]) {
      call throws(DBusError) in
      guard call.arguments.count == 2, let value = call.arguments[0].byteArray else {
        throw .invalidArgs("WriteValue takes ay, a{sv}")
      }
      try body(value, try call.arguments[1].vardict())
      return []
    }
  }

  private func readValue(_ characteristic: Characteristic, _ inbox: PeripheralInbox) -> DBusMethod {
    DBusMethod(
      "ReadValue", inputs: [DBusArgument("options", "a{sv}")], outputs: [DBusArgument("value", "ay")]
    ) {
      call throws(DBusError) in
      [.bytes(try inbox.read(characteristic, options(call)))]
    }
  }
}

private func options(_ call: DBusMethodCall) throws(DBusError) -> [String: DBusValue] {
  guard let first = call.arguments.first else { return [:] }
  return try first.vardict()
}
