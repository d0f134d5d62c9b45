import Foundation
import OTADeviceFuzzing
import OTAFuzzing
import OTAGatewayFuzzing
import OTALink
import OTATestSupport
import OTATrustFuzzing
import OTAWire

/// The checked-in inputs (Seeds/NAME, Regressions/NAME) and a deterministic stream of made-up ones.
enum FuzzInputs {
  static let directory = RepositoryRoot.url("Tests/OTAFuzzingTests")

  /// Every file under `kind/target`, by name.
  static func files(_ kind: String, _ target: String) -> [(name: String, bytes: [UInt8])] {
    let folder = directory.appendingPathComponent(kind).appendingPathComponent(target)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    return names.sorted().filter { !$0.hasPrefix(".") }.compactMap { name in
      guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
        return nil
      }
      return (name, [UInt8](data))
    }
  }

  static let entries: [String: @Sendable ([UInt8]) -> [InvariantViolation]] = [
    "wire": WireFuzzer.check, "mcuboot": MCUbootFuzzer.check, "receiver": ReceiverFuzzer.check,
    "trust": TrustFuzzer.check, "cbor": CBORFuzzer.check, "interleaving": InterleavingFuzzer.check,
    "swu": SWUFuzzer.check, "libconfig": LibconfigFuzzer.check, "ddi": DDIFuzzer.check,
  ]
}

/// The made-up inputs come from OTALink's SplitMix64: the same inputs on every run and every machine.
extension SeededGenerator {
  /// Random bytes, or a seed with a few bytes changed, inserted or cut off (as libFuzzer mutates).
  mutating func input(from seeds: [[UInt8]], maxLength: Int) -> [UInt8] {
    guard !seeds.isEmpty, Bool.random(using: &self) else {
      return (0..<Int.random(in: 0...maxLength, using: &self)).map { _ in
        UInt8.random(in: 0...255, using: &self)
      }
    }
    var bytes = seeds.randomElement(using: &self)!
    for _ in 0..<Int.random(in: 1...4, using: &self) {
      let position = Int.random(in: 0...bytes.count, using: &self)
      switch Int.random(in: 0..<3, using: &self) {
      case 0 where position < bytes.count: bytes[position] = UInt8.random(in: 0...255, using: &self)
      case 1: bytes.insert(UInt8.random(in: 0...255, using: &self), at: position)
      default: bytes.removeSubrange(position...)
      }
    }
    return bytes
  }
}
