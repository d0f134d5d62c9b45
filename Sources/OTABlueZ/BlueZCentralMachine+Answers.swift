import Logging
import OTADBus
import OTALink
import OTAWire

/// What bluetoothd says: the answers to calls, its signals; and the timers running out.
extension BlueZCentralMachine {
  // MARK: Answers

  mutating func succeeded(_ call: BlueZCall, _ values: [DBusValue]) {
    switch call {
    case .setDiscoveryFilter:
      guard phase == .discovering else { return }
      start(
        .startDiscovery,
        BlueZRequest(
          path: adapterPath, interface: BlueZ.adapter, method: "StartDiscovery", timeout: .seconds(5)))
    case .startDiscovery:
      guard phase == .discovering else { return }
      startTimer(.freshDiscovery, after: BlueZ.discoveryRound)
      start(
        .listDevices,
        BlueZRequest(
          path: .root, interface: DBusStandardInterface.objectManager, method: "GetManagedObjects",
          timeout: .seconds(5)))
    case .endDiscoveryForAFreshOne:
      guard phase == .discovering else { return }
      startDiscovery()
    case .listDevices:
      guard phase == .discovering else { return }
      listedDevices(values)
    case .deviceProperties(let path):
      guard let properties = try? values.first?.vardict() else { return }
      devices[path] = properties
      consider(path, properties)
    case .connect:
      guard phase == .connecting, let device else { return }
      phase = .resolving
      start(
        .checkServicesResolved(device),
        BlueZRequest(
          path: device, interface: DBusStandardInterface.properties, method: "GetAll",
          arguments: [.string(BlueZ.device)], timeout: .seconds(5)))
    case .checkServicesResolved(let path):
      guard let properties = try? values.first?.vardict() else { return }
      devices[path] = properties
      if phase == .resolving, properties["ServicesResolved"]?.boolValue == true { listCharacteristics() }
    case .listCharacteristics:
      guard case .listing = phase else { return }
      found(characteristics: Self.objects(in: values, interface: BlueZ.gattCharacteristic))
      // Not all there yet: they may still come as InterfacesAdded, for a moment.
      if case .listing = phase { startTimer(.characteristicsLate, after: .seconds(1)) }
    case .startNotify:
      guard case .preparing(let characteristics, _) = phase else { return }
      start(
        .acquireWrite,
        BlueZRequest(
          path: characteristics.data, interface: BlueZ.gattCharacteristic, method: "AcquireWrite",
          arguments: [.vardict([:])]))
    case .acquireWrite:
      guard case .preparing(let characteristics, _) = phase else { return }
      guard values.count == 2, let descriptor = values[0].fileDescriptor, let mtu = values[1].uint16Value
      else {
        fail("AcquireWrite gave no socket")
        return
      }
      phase = .preparing(characteristics, acquiredMTU: Int(mtu))
      out.append(.adoptDataSocket(descriptor))
    case .writeControl:
      controlWritten()
    case .writeData:
      dataCommandWritten()
    case .readInfo(let offset):
      infoRead(offset: offset, values.first?.byteArray ?? [])
    case .readBlockHashes(let offset):
      blockHashesRead(offset: offset, values.first?.byteArray ?? [])
    case .readIdentity(let characteristic):
      let bytes = values.first?.byteArray ?? []
      let text = String(validating: bytes, as: UTF8.self)
      if text == nil {
        out.append(.log(.info, "the device's \(characteristic) is not UTF-8: taken as unknown"))
      }
      identityRead(characteristic, text)
    }
  }

  mutating func failed(_ call: BlueZCall, _ error: BlueZError, _ raw: DBusError) {
    let detail = "\(raw.name): \(raw.message)"
    // ATT's Invalid Handle (0x01): the handles BlueZ cached for this device are not the device's
    // (a peripheral that registered its GATT application again, and no Service Changed reached the
    // cache). Every later attempt would meet them again: forget the device at the next one, so
    // discovery finds it, and its services, afresh (seen in the VM: a gateway's every poll failed).
    if raw.message.contains("ATT error: 0x01"), let device {
      out.append(.log(.info, "\(call.method): invalid handle: forgetting \(device) at the next attempt"))
      staleDevices.insert(device)
    }
    switch (call, error) {
    case (.setDiscoveryFilter, .inProgress), (.startDiscovery, .inProgress):
      // Already discovering: fine.
      succeeded(call, [])
    case (.setDiscoveryFilter, _), (.startDiscovery, _):
      guard phase == .discovering else { return }
      fail("could not start discovery on \(configuration.adapter): \(raw.message)")
    case (.endDiscoveryForAFreshOne, _):
      // Whatever the stop answered (it may have been stopped already), the fresh one starts.
      out.append(.log(.debug, "StopDiscovery failed: \(detail)"))
      succeeded(call, [])
    case (.listDevices, _), (.deviceProperties, _), (.checkServicesResolved, _):
      // Discovery goes on through signals; ServicesResolved may still come as a signal.
      out.append(.log(.debug, "\(call.method) failed: \(detail)"))
    case (.connect, .inProgress):
      guard phase == .connecting else { return }
      out.append(.log(.debug, "a Connect is already under way: calling again shortly"))
      startTimer(.connectAgain, after: Self.retryDelay)
    case (.connect, .alreadyConnected):
      succeeded(call, [])
    case (.connect(let path), _):
      guard phase == .connecting else { return }
      staleDevices.insert(path)
      fail("connecting failed: \(raw.message)")
    case (.acquireWrite, .notPermitted), (.acquireWrite, .notSupported), (.acquireWrite, .failed):
      guard case .preparing(let characteristics, _) = phase else { return }
      out.append(.log(.info, "AcquireWrite refused (\(detail)): data goes as WriteValue commands"))
      becomeReady(
        characteristics, mtu: characteristics.mtu ?? ATTMTU.minimum.value,
        transport: .writeCommands(inFlight: 0))
    case (.writeControl, _):
      out.append(.log(.warning, "control-point write failed: \(detail)"))
      out.append(.emit(.controlWriteFailed(0xFF)))
      controlWritten()
    case (.writeData, _):
      out.append(.log(.warning, "data write failed: \(detail)"))
      dataCommandWritten()
    case (.readInfo(let offset), .invalidOffset) where offset > 0:
      // Past the end: what was read is the whole value.
      infoRead(offset: offset, [])
    case (.readInfo, _):
      lose("reading Info failed: \(raw.message)")
    case (.readBlockHashes(let offset), .invalidOffset) where offset > 0:
      blockHashesRead(offset: offset, [])
    case (.readBlockHashes, _):
      // No hashes: the push goes on without them (compressed, or plain).
      out.append(.log(.info, "reading the block hashes failed (\(detail)): no block copies"))
      blockHashesUnavailable()
    case (.readIdentity(let characteristic), _):
      // Unknown, not fatal: the device is still updatable.
      out.append(.log(.info, "reading the device's \(characteristic) failed (\(detail)): taken as unknown"))
      identityRead(characteristic, nil)
    case (_, .notConnected) where !isReady:
      // The link was still going down (a previous central's Disconnect): start over shortly, until
      // the connect deadline.
      out.append(.log(.debug, "\(call.method) met a link going down: connecting again shortly"))
      startOverSoon()
    case (_, _):
      if isReady {
        out.append(.log(.warning, "\(call.method) failed: \(detail)"))
      } else {
        fail("\(call.method) failed: \(raw.message)")
      }
    }
  }

  // MARK: Signals

  mutating func handle(_ signal: DBusSignal) {
    if signal.member == "NameOwnerChanged", signal.arguments.count == 3,
      signal.arguments[0].stringValue == BlueZ.service, let newOwner = signal.arguments[2].stringValue
    {
      bluetoothdChanged(gone: newOwner.isEmpty)
      return
    }
    if signal.member == "InterfacesAdded", signal.arguments.count == 2,
      let path = signal.arguments[0].objectPathValue,
      let interfaces = signal.arguments[1].dictionaryEntries
    {
      for entry in interfaces {
        guard let properties = try? entry.value.vardict() else { continue }
        switch entry.key.stringValue {
        case BlueZ.device:
          devices[path] = properties
          consider(path, properties)
        case BlueZ.gattCharacteristic:
          found(characteristics: [path: properties])
        default: break
        }
      }
      return
    }
    guard signal.member == "PropertiesChanged", signal.arguments.count >= 2,
      let interface = signal.arguments[0].stringValue, let changed = try? signal.arguments[1].vardict()
    else { return }
    if interface == BlueZ.device {
      deviceChanged(
        signal.path, changed,
        invalidated: signal.arguments.count > 2 ? signal.arguments[2].stringArray ?? [] : [])
    } else if interface == BlueZ.gattCharacteristic, case .ready(let ready) = phase,
      signal.path == ready.characteristics.control, let value = changed["Value"]?.byteArray
    {
      out.append(.emit(.notification(value)))
    }
  }

  mutating func deviceChanged(
    _ path: DBusObjectPath, _ changed: [String: DBusValue], invalidated: [String]
  ) {
    if var known = devices[path] {
      known.merge(changed) { _, new in new }
      for name in invalidated { known[name] = nil }
      devices[path] = known
    }
    if phase == .discovering, changed["RSSI"] != nil {
      if let known = devices[path] {
        consider(path, known)
      } else if !pending.values.contains(.deviceProperties(path)) {
        start(
          .deviceProperties(path),
          BlueZRequest(
            path: path, interface: DBusStandardInterface.properties, method: "GetAll",
            arguments: [.string(BlueZ.device)], timeout: .seconds(5)))
      }
    }
    guard path == device, phase != .idle else { return }
    if changed["Connected"]?.boolValue == false {
      if isReady {
        lose("the device disconnected")
      } else if phase != .discovering {
        // A link going down while we set up (a previous central's Disconnect): start over shortly.
        startOverSoon()
      }
    } else if changed["ServicesResolved"]?.boolValue == true, phase == .resolving {
      listCharacteristics()
    }
  }

  /// bluetoothd went away (or came back): every object of the old one died with it, the link, the
  /// devices, a discovery, and no PropertiesChanged says so. A ready link is lost; a connect under
  /// way starts over shortly, within its deadline, on the bluetoothd its supervisor starts again.
  mutating func bluetoothdChanged(gone: Bool) {
    let reason = gone ? "bluetoothd stopped" : "bluetoothd restarted"
    devices = [:]
    staleDevices = []
    switch phase {
    case .idle:
      return
    case .ready:
      out.append(.log(.warning, "\(reason): the link to the device went with it"))
      lose(reason)
    default:
      out.append(.log(.warning, "\(reason) while connecting: starting over"))
      startOverSoon()
    }
  }

  // MARK: Timers

  mutating func fired(_ timer: BlueZTimer) {
    switch timer {
    case .connectDeadline:
      guard !isReady else { return }
      let discovering = phase == .discovering
      if discovering { stopDiscovery() }
      fail(discovering ? "no device matching \(configuration.selector) was found" : "connecting timed out")
    case .retryConnect:
      guard phase == .idle else { return }
      startDiscovery()
    case .freshDiscovery:
      guard phase == .discovering else { return }
      out.append(.log(.debug, "nothing found in \(BlueZ.discoveryRound): starting a fresh discovery"))
      start(
        .endDiscoveryForAFreshOne,
        BlueZRequest(
          path: adapterPath, interface: BlueZ.adapter, method: "StopDiscovery", timeout: .seconds(5)))
    case .connectAgain:
      guard phase == .connecting, let device else { return }
      start(.connect(device), BlueZRequest(path: device, interface: BlueZ.device, method: "Connect"))
    case .characteristicsLate:
      guard case .listing = phase else { return }
      fail("the device does not offer the OTA characteristics")
    case .socketRoom:
      flushData()
    case .dataStall:
      dataStalled()
    }
  }
}
