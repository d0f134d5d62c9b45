import OTALink

/// A link that hands out one scripted event per turn and records the Nordic DFU notifications and
/// drops; it fails the loop once the script is spent (a test never hangs).
final class ScriptedNordicDFULink: PeripheralLink {
  var script: [PeripheralEvent]
  var notifications: [[UInt8]] = []
  var drops = 0

  init(_ script: [PeripheralEvent]) { self.script = script }

  var descriptors: [Int32] { [] }
  var nextDeadline: Duration? { .zero }
  func service(readable: Set<Int32>, now: Duration, value: CharacteristicValue) throws(LinkError)
    -> [PeripheralEvent]
  {
    guard !script.isEmpty else { throw .protocolViolation("the script is spent") }
    return [script.removeFirst()]
  }
  func notify(_ bytes: [UInt8]) {}
  func disconnect() {}
  func notifyNordicDFU(_ service: NordicDFUService, _ bytes: [UInt8]) { notifications.append(bytes) }
  func disconnectNordicDFU(_ service: NordicDFUService) {
    drops += 1
    script.insert(.nordicDFUCentralGone(service), at: 0)
  }
}
