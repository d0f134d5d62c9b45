import OTACentral
import OTAGateway
import OTALink
import OTASocketLink

extension GatewayProbe {
  /// `facts(of:options:fallback:)` for several devices at once: their conversations in one loop, at
  /// most `parallel` at a time, the simulated links on one radio as a central's links are. Each
  /// device's facts in the order given.
  static func facts(
    of devices: [(device: String, fallback: Bool)], options: LinkOptions, parallel: Int
  ) -> [Result<Found, Failure>] {
    let radio = SharedRadio()
    var failures: [Int: Failure] = [:]
    var links: [(any CentralLink)?] = []
    for (index, entry) in devices.enumerated() {
      do {
        links.append(try options.makeLink(to: entry.device, radio: radio))
      } catch {
        links.append(nil)
        failures[index] = Failure("\(error)")
      }
    }
    let answers = CommandSession.identify(links: links, parallel: parallel)
    return devices.enumerated().map { index, entry in
      guard let link = links[index] else { return .failure(failures[index] ?? Failure("no link")) }
      return facts(from: answers[index], of: entry.device, link: link, fallback: entry.fallback)
    }
  }

  /// The devices on the simulated link probed together (their links share one radio); those over
  /// Bluetooth one at a time, as before: several conversations through bluetoothd in one loop did
  /// not answer in the VM (every probe timed out), and are not used until they do.
  static func severalFacts(
    of devices: [(device: String, fallback: Bool)], options: LinkOptions, parallel: Int
  ) -> [Result<Found, Failure>] {
    let simulated = devices.indices.filter { LinkOptions.isSimulated(devices[$0].device) }
    var results = [Result<Found, Failure>?](repeating: nil, count: devices.count)
    for (index, answer) in zip(
      simulated, facts(of: simulated.map { devices[$0] }, options: options, parallel: parallel))
    {
      results[index] = answer
    }
    return devices.indices.map { index in
      results[index] ?? facts(of: devices[index].device, options: options, fallback: devices[index].fallback)
    }
  }
}
