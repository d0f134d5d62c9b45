import OTAWire

/// Why a fault's line was refused: names the word and says what would do.
public struct FaultSpecError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

extension Fault {
  /// The actions' names, for a complaint and the help.
  public static let actionNames = [
    "drop-link", "refuse", "delay", "lose-chunk", "corrupt-chunk", "restart", "power-cut",
    "fail-health-check", "storage-full",
  ]

  /// Reads one fault's line (see the type's comment; docs/APP-TESTING.md has the catalogue).
  public init(parsing line: String) throws(FaultSpecError) {
    let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    guard let name = words.first else {
      throw FaultSpecError("an empty fault: name one of \(Self.actionNames.joined(separator: ", "))")
    }
    var settings: [String: String] = [:]
    for word in words.dropFirst() {
      guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
        throw FaultSpecError("'\(word)' is not a setting like after=37% or at=validate")
      }
      let key = String(word[..<equals])
      guard FaultText.keys.contains(key) else {
        throw FaultSpecError("unknown setting '\(key)' (known: \(FaultText.keys.joined(separator: ", ")))")
      }
      guard settings[key] == nil else { throw FaultSpecError("'\(key)' is set twice") }
      settings[key] = String(word[word.index(after: equals)...])
    }
    var reader = FaultText.Settings(values: settings)
    let request = try reader.take("at").map { (text: String) throws(FaultSpecError) -> FaultRequest in
      guard let request = FaultRequest(name: text) else {
        throw FaultSpecError(
          "at=\(text): no such request (known: \(FaultRequest.names.joined(separator: ", ")))")
      }
      return request
    }
    let after = try reader.take("after").map(FaultText.point)
    let action: Action
    switch name {
    case "drop-link": action = .dropLink
    case "restart": action = .restart
    case "power-cut": action = .powerCut
    case "lose-chunk": action = .loseChunk
    case "corrupt-chunk": action = .corruptChunk
    case "storage-full": action = .storageFull
    case "fail-health-check": action = .failHealthCheck
    case "delay":
      guard let text = reader.take("by") else { throw FaultSpecError("delay needs by=DURATION, e.g. by=2s") }
      action = .delay(try FaultText.duration(parsing: text))
    case "refuse":
      guard let request else {
        throw FaultSpecError("refuse needs at=REQUEST (\(FaultRequest.names.joined(separator: ", ")))")
      }
      action = .refuse(status: try FaultText.refusal(for: request, &reader))
    default:
      throw FaultSpecError("no fault '\(name)' (known: \(Self.actionNames.joined(separator: ", ")))")
    }
    let firing = try FaultText.firing(&reader)
    if let left = reader.values.keys.sorted().first {
      throw FaultSpecError("\(name) takes no \(left)=")
    }
    self.init(action, at: request, after: after, firing: firing)
    try checkTrigger()
  }

  /// Each action is due where it means something: a data fault on data, a refusal on a request.
  private func checkTrigger() throws(FaultSpecError) {
    switch action {
    case .dropLink, .restart, .powerCut:
      guard request != nil || after != nil else {
        throw FaultSpecError("\(action.name) needs at=REQUEST or after=BYTES|PERCENT%")
      }
    case .loseChunk, .corruptChunk, .storageFull:
      guard request == nil else {
        throw FaultSpecError("\(action.name) acts on data: give after=BYTES|PERCENT%, not at=")
      }
    case .failHealthCheck:
      guard request == nil, after == nil else {
        throw FaultSpecError("fail-health-check acts on the next trial: it takes no at= or after=")
      }
    case .refuse, .delay:
      break
    }
  }
}

/// The words of a fault's line.
enum FaultText {
  static let keys = ["at", "after", "status", "rc", "by", "times", "chance", "seed"]

  struct Settings {
    var values: [String: String]
    mutating func take(_ key: String) -> String? { values.removeValue(forKey: key) }
  }

  /// `65536`, `64KiB`, `1MiB` or `37%`.
  static func point(_ text: String) throws(FaultSpecError) -> Fault.Point {
    if text.hasSuffix("%") {
      guard let share = UInt8(text.dropLast()), share <= 100 else {
        throw FaultSpecError("after=\(text): a share is 0% to 100%")
      }
      return .percent(share)
    }
    let digits = text.prefix { $0.isNumber }
    let scale: UInt64? =
      switch text.dropFirst(digits.count).lowercased() {
      case "": 1
      case "k", "kib": 1 << 10
      case "m", "mib": 1 << 20
      default: nil
      }
    guard let number = UInt64(digits), let scale, number <= UInt64(UInt32.max) else {
      throw FaultSpecError("after=\(text): give bytes (65536, 64KiB, 1MiB) or a share (37%)")
    }
    return .bytes(number * scale)
  }

  /// `250ms`, `2s`: 1 ms to 60 s (a central's own timeouts are seconds long).
  static func duration(parsing text: String) throws(FaultSpecError) -> Duration {
    let digits = text.prefix { $0.isNumber }
    let milliseconds: Int64? =
      switch text.dropFirst(digits.count) {
      case "ms": Int64(digits)
      case "s": Int64(digits).map { $0 * 1000 }
      default: nil
      }
    guard let milliseconds, (1...60_000).contains(milliseconds) else {
      throw FaultSpecError("by=\(text): give 1ms to 60s, e.g. by=250ms or by=2s")
    }
    return .milliseconds(milliseconds)
  }

  static func duration(_ duration: Duration) -> String {
    let milliseconds =
      duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
  }

  /// The status an OTA request is refused with (`status=busy` or `status=12`), or the MCUmgr rc an
  /// SMP command is (`rc=10`): never success.
  static func refusal(for request: FaultRequest, _ reader: inout Settings) throws(FaultSpecError) -> UInt8 {
    if request.isNordic || request.isSecureDFU {
      let (names, numbers, service): ([String: UInt8], ClosedRange<UInt8>, String) =
        request.isNordic
        ? (nordicStatusNames, 2...6, "a Legacy DFU") : (secureDFUResultNames, 2...10, "a Secure DFU")
      if reader.values["rc"] != nil {
        throw FaultSpecError("\(service) command is refused with status=NAME, not rc=")
      }
      guard let text = reader.take("status") else {
        throw FaultSpecError(
          "refuse at=\(request.name) needs status=NAME (\(names.keys.sorted().joined(separator: ", ")))")
      }
      guard let status = names[text] ?? UInt8(text).flatMap({ numbers.contains($0) ? $0 : nil }) else {
        throw FaultSpecError(
          "status=\(text): use one of \(names.keys.sorted().joined(separator: ", ")) or a number \(numbers.lowerBound) to \(numbers.upperBound)"
        )
      }
      return status
    }
    if request.isSMP {
      if reader.values["status"] != nil {
        throw FaultSpecError("an SMP command is refused with rc=N (1 to 255), not status=")
      }
      guard let text = reader.take("rc"), let rc = UInt8(text), rc != 0 else {
        throw FaultSpecError(
          "refuse at=\(request.name) needs rc=N, MCUmgr's error code (1 to 255; 10 is EBUSY)")
      }
      return rc
    }
    if reader.values["rc"] != nil {
      throw FaultSpecError("an OTA request is refused with status=NAME, not rc=")
    }
    guard let text = reader.take("status") else {
      throw FaultSpecError("refuse needs status=NAME (\(statusNames.joined(separator: ", "))) or a number")
    }
    if let number = UInt8(text), number != 0, StatusCode(rawValue: number) != nil { return number }
    guard let code = StatusCode.allCases.first(where: { statusName($0.rawValue) == text }), code != .success
    else {
      throw FaultSpecError(
        "status=\(text): use one of \(statusNames.joined(separator: ", ")) or a number 1 to 255")
    }
    return code.rawValue
  }

  /// Legacy DFU's response statuses (Nordic's `dfu_transport_ble.c`), success left out.
  static let nordicStatusNames: [String: UInt8] = [
    "invalid-state": 2, "not-supported": 3, "data-size-exceeds-limit": 4, "crc-error": 5,
    "operation-failed": 6,
  ]

  static func nordicStatusName(_ status: UInt8) -> String {
    nordicStatusNames.first { $0.value == status }?.key ?? "\(status)"
  }

  /// Secure DFU's result codes (Nordic's `nrf_dfu_types.h`), success and the extended error left out.
  static let secureDFUResultNames: [String: UInt8] = [
    "opcode-not-supported": 2, "invalid-parameter": 3, "insufficient-resources": 4, "invalid-object": 5,
    "unsupported-type": 7, "operation-not-permitted": 8, "operation-failed": 10,
  ]

  static func secureDFUResultName(_ status: UInt8) -> String {
    secureDFUResultNames.first { $0.value == status }?.key ?? "\(status)"
  }

  static var statusNames: [String] {
    StatusCode.allCases.filter { $0 != .success }.map { statusName($0.rawValue) }
  }

  /// `busy`, `storage-error`, ...: the status's description with dashes; a number for the others.
  static func statusName(_ status: UInt8) -> String {
    guard let code = StatusCode(rawValue: status) else { return "\(status)" }
    let name: String =
      switch code {
      case .tooLarge: "too-large"
      default: String(code.description.map { $0 == " " ? "-" : $0 }).lowercased()
      }
    return name
  }

  /// `times=N`, `times=always`, `chance=0.3 seed=7`.
  static func firing(_ reader: inout Settings) throws(FaultSpecError) -> Fault.Firing {
    let times = try reader.take("times").map { (text: String) throws(FaultSpecError) -> UInt32? in
      if text == "always" { return nil }
      guard let count = UInt32(text), count > 0 else {
        throw FaultSpecError("times=\(text): give a count from 1, or always")
      }
      return count
    }
    let seedText = reader.take("seed")
    guard let chanceText = reader.take("chance") else {
      if seedText != nil { throw FaultSpecError("seed= goes with chance=") }
      return times.map { $0.map(Fault.Firing.times) ?? .always } ?? .times(1)
    }
    guard let perMillion = perMillion(chanceText) else {
      throw FaultSpecError("chance=\(chanceText): give a share above 0 and at most 1, e.g. chance=0.25")
    }
    guard let seedText else { throw FaultSpecError("chance= needs seed=N, so that a run can be replayed") }
    guard let seed = UInt64(seedText) else { throw FaultSpecError("seed=\(seedText): give a whole number") }
    return .chance(perMillion: perMillion, seed: seed, times: times ?? nil)
  }

  /// `0.25` → 250000; at most six decimals, above 0, at most 1.
  static func perMillion(_ text: String) -> UInt32? {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), let whole = UInt32(parts[0]) else { return nil }
    let decimals = parts.count == 2 ? String(parts[1]) : ""
    guard decimals.count <= 6, decimals.allSatisfy(\.isNumber) else { return nil }
    let fraction = UInt32(decimals.padding(toLength: 6)) ?? 0
    let value = whole * 1_000_000 + fraction
    return (1...1_000_000).contains(value) && whole <= 1 ? value : nil
  }

  static func fraction(_ perMillion: UInt32) -> String {
    guard perMillion < 1_000_000 else { return "1" }
    var decimals = String(perMillion)
    decimals = String(repeating: "0", count: 6 - decimals.count) + decimals
    while decimals.hasSuffix("0") { decimals.removeLast() }
    return "0.\(decimals)"
  }
}

extension String {
  fileprivate func padding(toLength length: Int) -> String {
    count >= length ? self : self + String(repeating: "0", count: length - count)
  }
}
