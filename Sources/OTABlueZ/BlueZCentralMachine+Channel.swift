import OTALink
import OTASystem
import OTAWire

/// The L2CAP data channel: chosen at the first Info read of a connection (Info offset 78 names the
/// PSM), opened before that Info is handed on, so that the sender sizes its chunks for it. A
/// channel that cannot open, or drops, leaves `auto` on GATT for the rest of the push.
extension BlueZCentralMachine {
  /// The Info offset of the L2CAP PSM (u16).
  static let infoPSMOffset = 78

  mutating func infoComplete(_ info: [UInt8]) {
    guard case .ready(var ready) = phase, !ready.dataPathChosen else {
      out.append(.emit(.info(info)))
      return
    }
    ready.dataPathChosen = true
    phase = .ready(ready)
    let record = try? InfoRecord(bytes: info)
    switch configuration.dataPath.choose(psm: record?.l2capPSM ?? 0, channelFailure: channelFailure) {
    case .gatt(let reason):
      if let reason { out.append(.log(.warning, "data over GATT: \(reason)")) }
      out.append(.emit(.info(info)))
    case .fail(let reason):
      out.append(.log(.warning, "\(reason); --data-path l2cap does not fall back to GATT"))
      lose(reason)
    case .channel(let psm):
      guard let endpoint = channelEndpoint(psm: psm) else {
        channelFailure = "the device's address is not known"
        out.append(.log(.warning, "data over GATT: \(channelFailure ?? "")"))
        out.append(.emit(.info(info)))
        return
      }
      ready.heldInfo = info
      phase = .ready(ready)
      let security: BluetoothSecurity? = record?.flags.contains(.pairingRequired) == true ? .high : nil
      out.append(.log(.info, "opening the L2CAP data channel to \(endpoint)"))
      out.append(.openChannel(endpoint, security: security))
    }
  }

  /// The connected device's address and type, from its Device1 properties.
  func channelEndpoint(psm: UInt16) -> L2CAPEndpoint? {
    guard let device, let properties = devices[device], let address = deviceAddress else { return nil }
    let type =
      properties["AddressType"]?.stringValue.flatMap(BluetoothAddressType.init(bluezName:)) ?? .lePublic
    return L2CAPEndpoint(address: address, type: type, psm: psm)
  }

  /// The Bluetooth address of the device connected (or being connected to), as BlueZ listed it.
  var deviceAddress: BluetoothAddress? {
    guard let device else { return nil }
    return devices[device]?["Address"]?.stringValue.flatMap(BluetoothAddress.init(parsing:))
  }

  mutating func channelOpened(_ parameters: L2CAPChannelParameters) {
    guard case .ready(var ready) = phase, let info = ready.heldInfo,
      let psm = (try? InfoRecord(bytes: info))?.l2capPSM
    else {
      out.append(.closeChannel)
      return
    }
    ready.heldInfo = nil
    ready.gattTransport = ready.transport
    ready.transport = .channel
    phase = .ready(ready)
    out.append(.emit(.dataChannelOpened(DataChannelReport(psm: psm, parameters: parameters))))
    out.append(.emit(.info(info)))
  }

  mutating func channelFailed(_ reason: String) {
    channelFailure = reason
    guard case .ready(var ready) = phase, let info = ready.heldInfo else { return }
    if configuration.dataPath == .l2cap {
      out.append(.log(.warning, "the L2CAP channel failed (\(reason)); --data-path l2cap does not fall back"))
      lose("the L2CAP channel failed: \(reason)")
      return
    }
    ready.heldInfo = nil
    phase = .ready(ready)
    out.append(.log(.warning, "the L2CAP channel failed (\(reason)): data over GATT"))
    out.append(.emit(.info(info)))
  }

  /// The channel broke mid-transfer: the connection is dropped and the sender reconnects and
  /// resumes, over GATT (`auto`) this time.
  mutating func channelDropped(_ reason: String) {
    guard case .ready(let ready) = phase, ready.transport == .channel else { return }
    channelFailure = reason
    let next = configuration.dataPath == .auto ? "reconnecting to go on over GATT" : "reconnecting"
    out.append(.log(.warning, "the L2CAP channel dropped (\(reason)): \(next)"))
    lose("the L2CAP channel dropped: \(reason)")
  }
}
