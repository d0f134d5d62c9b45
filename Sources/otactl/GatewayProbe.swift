import OTABlueZ
import OTACentral
import OTAGateway
import OTALink
import OTAWire

/// A short conversation with one device: its Info and its identity, as the gateway's facts, and
/// the Bluetooth identity it answered from (what `TargetBindings` binds its serial to).
enum GatewayProbe {
  struct Found {
    var facts: TargetFacts
    /// "address AA:BB:CC:DD:EE:FF" as BlueZ reported the peer; on the simulated link "socket
    /// NAME.sock", the socket's name; "name NAME" only when BlueZ named no address.
    var identity: String
  }

  struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// `fallback`: name a device that does not say its serial by its address; otherwise such a
  /// device is a failed probe (asked again: bluetoothd may not have listed its Device Information
  /// Service yet).
  static func facts(of device: String, options: LinkOptions, fallback: Bool) -> Result<Found, Failure> {
    let link: any CentralLink
    do {
      link = try options.makeLink(to: device)
    } catch {
      return .failure(Failure("\(error)"))
    }
    return facts(from: CommandSession.identify(link: link), of: device, link: link, fallback: fallback)
  }

  /// The facts a device's answers make (`CommandSession.identify`'s).
  static func facts(
    from answer: Result<(info: InfoRecord, identity: DeviceIdentity), CommandSession.Failure>,
    of device: String, link: any CentralLink, fallback: Bool
  ) -> Result<Found, Failure> {
    switch answer {
    case .success(let (info, identity)):
      // A device from before the identity characteristics: its address (or socket name) names it,
      // stable as long as it keeps that address; its hardware is unstated ("default").
      guard identity.serial != nil || fallback else {
        return .failure(Failure("the device did not say its serial (Device Information Service)"))
      }
      let serial = identity.serial ?? fallbackSerial(device)
      let facts = TargetFacts(
        serial: serial, model: identity.model ?? "default",
        hardwareRevision: identity.hardwareRevision ?? "default",
        info: info)
      return .success(Found(facts: facts, identity: linkIdentity(device, link)))
    case .failure(let failure):
      return .failure(Failure(failure.description))
    }
  }

  /// The identity of the device `link` reached as `device`.
  static func linkIdentity(_ device: String, _ link: any CentralLink) -> String {
    if LinkOptions.isSimulated(device) {
      return "socket " + (device.split(separator: "/").last.map(String.init) ?? device)
    }
    if let address = (link as? BlueZCentral)?.peerAddress { return "address " + address.uppercased() }
    return DeviceList.identity(device)
  }

  static func fallbackSerial(_ device: String) -> String {
    let last = device.split(separator: "/").last.map(String.init) ?? device
    let name = last.hasSuffix(".sock") ? String(last.dropLast(5)) : last
    return "blueota-" + name.lowercased().replacingOccurrences(of: ":", with: "")
  }
}
