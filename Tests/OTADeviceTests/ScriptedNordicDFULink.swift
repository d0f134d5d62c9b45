import OTALink

/// A link that hands out one scripted event per turn and records the Nordic DFU notifications and
/// drops; it fails the loop once the script is spent (a test never hangs).
final class ScriptedNordicDFULink: PeripheralLink {
  /// The one central the scripts write as.
  static let central = "/org/bluez/hci0/dev_00_AA_01_00_00_01"
  var script: [PeripheralEvent]
  var notifications: [[UInt8]] = []
  var drops = 0
  private var lastService: NordicDFUService?

  init(_ script: [PeripheralEvent]) { self.script = script }

  var descriptors: [Int32] { [] }
  var nextDeadline: Duration? { .zero }
  func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue) throws(LinkError)
    -> [PeripheralEvent]
  {
    guard !script.isEmpty else { throw .protocolViolation("the script is spent") }
    let event = script.removeFirst()
    switch event {
    case .nordicDFUControl(let service, _, _), .nordicDFUPacket(let service, _, _): lastService = service
    default: break
    }
    return [event]
  }
  func notify(_ bytes: [UInt8]) {}
  func disconnect() {}
  func notifyNordicDFU(_ service: NordicDFUService, _ bytes: [UInt8]) { notifications.append(bytes) }
  func disconnect(central: String) {
    drops += 1
    // The service the script last wrote to hears that its central went.
    if let service = lastService { script.insert(.nordicDFUCentralGone(service, central: central), at: 0) }
  }
}
