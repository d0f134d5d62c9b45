import OTAWire

/// The `--link` syntax: comma-separated `key=value` pairs, any subset, in any order.
extension LinkConditions {
  public static let help = """
    comma-separated key=value pairs, e.g. mtu=185,interval=30ms,loss=0.02
      mtu=N               ATT MTU, 23...517 (default 247)
      interval=T          connection interval, 7.5ms...4s (default 15ms; units ms or s)
      packets=N           link-layer packets per connection event (default 6)
      event=T             connection event length, at most the interval (default the whole interval)
      phy=1M|2M|coded|coded-s2  radio rate (default 2M; coded is S=8)
      dle=on|off          Data Length Extension: 251-byte link-layer packets, else 27 (default on)
      datalength=N        link-layer payload bytes, 27...251 (default 251)
      encrypt=on|off      a 4-byte MIC in every link-layer packet with a payload (default off)
      queue=N             write-without-response packets buffered: the flow-control credit (default 16)
      loss=P              chance a data packet is lost (default 0)
      dup=P               chance a data packet arrives twice (default 0)
      reorder=P           chance a packet is overtaken by a later one (default 0)
      flip=P              chance a data packet has a bit flipped (default 0)
      drop=P              chance per connection event that the link drops (default 0)
      disconnect-after=N  drop the link once after N data bytes (default never)
      seed=N              seed for the randomness above (default 1)
      pace=on|off         limit each event by air time (default on; off measures the ends, not the air)
      coc=N|off           data over an L2CAP credit-based channel with N-byte SDUs (otad: 4100), not ATT writes
      mps=N               the channel's MPS, 23...65533 (default the data length less 4)
      credits=N           the channel's credits, one per K-frame (default Linux's SDU / MPS + 1)
    """

  /// Parses `spec` on top of `base`; a readable message says what is wrong.
  public init(spec: String, base: LinkConditions = LinkConditions()) throws(LinkSpecError) {
    self = base
    for item in spec.split(separator: ",", omittingEmptySubsequences: true) {
      let parts = item.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces }
      guard parts.count == 2, !parts[0].isEmpty else {
        throw LinkSpecError("'\(item)' is not key=value")
      }
      try apply(key: parts[0].lowercased(), value: parts[1])
    }
  }

  private mutating func apply(key: String, value: String) throws(LinkSpecError) {
    switch key {
    case "mtu": mtu = try Self.integer(key, value, in: ATTMTU.range)
    case "interval":
      connectionInterval = try Self.duration(key, value)
      guard connectionInterval >= .microseconds(500), connectionInterval <= .seconds(4) else {
        throw LinkSpecError("interval=\(value) is outside 0.5ms...4s")
      }
    case "event": eventLength = try Self.duration(key, value)
    case "datalength": dataLength = try Self.integer(key, value, in: 27...251)
    case "encrypt": encrypted = try Self.flag(key, value)
    case "packets": packetsPerEvent = try Self.integer(key, value, in: 1...1000)
    case "phy":
      guard let phy = PHY.allCases.first(where: { $0.rawValue.lowercased() == value.lowercased() }) else {
        throw LinkSpecError("phy=\(value): use 1M, 2M, coded or coded-s2")
      }
      self.phy = phy
    case "dle":
      switch value.lowercased() {
      case "on", "yes", "1", "true": dataLength = 251
      case "off", "no", "0", "false": dataLength = 27
      default: throw LinkSpecError("dle=\(value): use on or off")
      }
    case "queue": queueDepth = try Self.integer(key, value, in: 1...100_000)
    case "loss": loss = try Self.probability(key, value)
    case "dup": duplication = try Self.probability(key, value)
    case "reorder": reordering = try Self.probability(key, value)
    case "flip": bitFlips = try Self.probability(key, value)
    case "drop": disconnects = try Self.probability(key, value)
    case "disconnect-after": disconnectAfterBytes = try Self.integer(key, value, in: 1...Int(Int32.max))
    case "pace":
      switch value.lowercased() {
      case "on", "yes", "1", "true": airTimePacing = true
      case "off", "no", "0", "false": airTimePacing = false
      default: throw LinkSpecError("pace=\(value): use on or off")
      }
    case "coc":
      if ["off", "no", "0", "false"].contains(value.lowercased()) {
        channel = nil
      } else {
        let sdu = try Self.integer(key, value, in: 23...65535)
        channel = ChannelShape(sdu: sdu, mps: channel?.mps, credits: channel?.credits)
      }
    case "mps":
      var shape = channel ?? ChannelShape()
      shape.mps = try Self.integer(key, value, in: 23...65533)
      channel = shape
    case "credits":
      var shape = channel ?? ChannelShape()
      shape.credits = try Self.integer(key, value, in: 1...65535)
      channel = shape
    case "seed":
      guard let seed = UInt64(value) else { throw LinkSpecError("seed=\(value) is not a whole number") }
      self.seed = seed
    default:
      throw LinkSpecError(
        "unknown key '\(key)' (known: mtu interval event packets phy dle datalength encrypt queue loss dup reorder flip drop disconnect-after seed pace coc mps credits)"
      )
    }
  }

  private static func integer(_ key: String, _ value: String, in range: ClosedRange<Int>)
    throws(LinkSpecError) -> Int
  {
    guard let number = Int(value), range.contains(number) else {
      throw LinkSpecError(
        "\(key)=\(value) is not a whole number in \(range.lowerBound)...\(range.upperBound)")
    }
    return number
  }

  private static func flag(_ key: String, _ value: String) throws(LinkSpecError) -> Bool {
    switch value.lowercased() {
    case "on", "yes", "1", "true": return true
    case "off", "no", "0", "false": return false
    default: throw LinkSpecError("\(key)=\(value): use on or off")
    }
  }

  private static func probability(_ key: String, _ value: String) throws(LinkSpecError) -> Double {
    guard let number = Double(value), number >= 0, number <= 1 else {
      throw LinkSpecError("\(key)=\(value) is not a probability between 0 and 1")
    }
    return number
  }

  private static func duration(_ key: String, _ value: String) throws(LinkSpecError) -> Duration {
    let lower = value.lowercased()
    let (digits, scale): (Substring, Double) =
      lower.hasSuffix("ms")
      ? (lower.dropLast(2), 1e-3)
      : lower.hasSuffix("us")
        ? (lower.dropLast(2), 1e-6)
        : lower.hasSuffix("s") ? (lower.dropLast(1), 1) : (Substring(lower), 1e-3)
    guard let number = Double(digits), number > 0 else {
      throw LinkSpecError("\(key)=\(value) is not a duration like 15ms or 1s")
    }
    return .nanoseconds(Int64(number * scale * 1e9))
  }

  /// The same conditions in `--link` syntax.
  public var description: String {
    var parts = [
      "mtu=\(mtu)", "interval=\(Self.format(connectionInterval))", "packets=\(packetsPerEvent)",
      "phy=\(phy.rawValue)",
      dataLength == 251 || dataLength == 27
        ? "dle=\(dataLength > 27 ? "on" : "off")" : "datalength=\(dataLength)",
      "queue=\(queueDepth)",
    ]
    if let eventLength { parts.insert("event=\(Self.format(eventLength))", at: 2) }
    if encrypted { parts.append("encrypt=on") }
    if loss > 0 { parts.append("loss=\(loss)") }
    if duplication > 0 { parts.append("dup=\(duplication)") }
    if reordering > 0 { parts.append("reorder=\(reordering)") }
    if bitFlips > 0 { parts.append("flip=\(bitFlips)") }
    if disconnects > 0 { parts.append("drop=\(disconnects)") }
    if let after = disconnectAfterBytes { parts.append("disconnect-after=\(after)") }
    if !airTimePacing { parts.append("pace=off") }
    if let channel {
      parts.append("coc=\(channel.sdu)")
      if let mps = channel.mps { parts.append("mps=\(mps)") }
      if let credits = channel.credits { parts.append("credits=\(credits)") }
    }
    return parts.joined(separator: ",")
  }

  static func format(_ duration: Duration) -> String {
    let microseconds =
      duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    if microseconds % 1000 != 0 { return "\(Double(microseconds) / 1000)ms" }
    return "\(microseconds / 1000)ms"
  }
}

/// A `--link` value that does not parse: the message says which part and why.
public struct LinkSpecError: Error, Equatable, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

extension String {
  /// Without leading and trailing spaces (config and `--link` values).
  public var trimmingSpaces: String {
    String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
