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

  /// The write flag, or its encrypted, authenticated (bonded) form.
  private var write: String { requireEncryption ? "encrypt-authenticated-write" : "write" }

  func objects(_ inbox: PeripheralInbox) -> [DBusObject] {
    otaObjects(inbox) + (smp ? smpObjects(inbox) : [])
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
          writeValue { value, options in inbox.controlWrite(value, options) },
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
          writeValue { value, options in inbox.dataWrite(value, options) },
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
