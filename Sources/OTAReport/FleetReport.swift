/// The lines of `otactl push --json` with several devices (docs/OTACTL.md): each device's push
/// lines as one push writes them, with a `device` key added (`Tagged`), and at the end one
/// `summary` line with every device's outcome and the aggregate figures.
public enum FleetReport {
  /// One device's push line, with the device it is about.
  public struct Tagged: Codable, Equatable, Sendable {
    public let device: String
    public let line: PushReport

    public init(device: String, line: PushReport) {
      self.device = device
      self.line = line
    }

    private enum Key: String, CodingKey { case device }

    public init(from decoder: any Decoder) throws {
      device = try decoder.container(keyedBy: Key.self).decode(String.self, forKey: .device)
      line = try PushReport(from: decoder)
    }

    /// The push line's keys and `device`, in one object.
    public func encode(to encoder: any Encoder) throws {
      try line.encode(to: encoder)
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(device, forKey: .device)
    }
  }

  /// The last line: what became of each device, and the figures of the whole push.
  public struct Summary: Codable, Equatable, Sendable {
    public private(set) var event = "summary"
    /// In the order the devices were given.
    public let devices: [Device]
    /// Devices that ended running the new version, confirmed (or validated, with --no-activate).
    public let confirmed: Int
    public let total: Int
    /// The most links that were up at once.
    public let parallel: Int
    /// From the first connection attempt to the last device's end.
    public let seconds: Double
    /// Image bytes of every transfer that completed, over the span from the first transfer's
    /// start to the last one's VALIDATE answer: what the links carried together.
    public let aggregateGoodput: PushReport.Nullable<Double>
    /// Simulated link only: what the links carry together at most on one shared radio, for as
    /// many links as ran at once (`AirTime.sharedCapacityBytesPerSecond`).
    public let aggregateCapacity: PushReport.Nullable<Double>
    /// Simulated link only: the radio's physical ceiling (no controller packet limit).
    public let physicalCeiling: PushReport.Nullable<Double>

    public init(
      devices: [Device], parallel: Int, seconds: Double, aggregateGoodput: Double?,
      aggregateCapacity: Double?,
      physicalCeiling: Double?
    ) {
      self.devices = devices
      confirmed = devices.filter(\.ok).count
      total = devices.count
      self.parallel = parallel
      self.seconds = seconds
      self.aggregateGoodput = .init(aggregateGoodput)
      self.aggregateCapacity = .init(aggregateCapacity)
      self.physicalCeiling = .init(physicalCeiling)
    }
  }

  /// One device in the summary.
  public struct Device: Codable, Equatable, Sendable {
    public let device: String
    public let ok: Bool
    /// otactl's exit code had this device been pushed alone (0 when ok).
    public let exitCode: Int
    /// Why it failed, in the words a single push uses; null when ok.
    public let reason: PushReport.Nullable<String>
    public let runningVersion: PushReport.Nullable<String>
    public let confirmed: PushReport.Nullable<Bool>
    public let resumedFrom: [Int]
    /// From this device's turn to its end.
    public let seconds: Double
    /// Image bytes over its transfer (PREPARE to VALIDATE's answer); null when none completed.
    public let goodput: PushReport.Nullable<Double>
    public let bytesOnAir: Int

    public init(
      device: String, ok: Bool, exitCode: Int, reason: String?, runningVersion: String?, confirmed: Bool?,
      resumedFrom: [Int], seconds: Double, goodput: Double?, bytesOnAir: Int
    ) {
      self.device = device
      self.ok = ok
      self.exitCode = exitCode
      self.reason = .init(reason)
      self.runningVersion = .init(runningVersion)
      self.confirmed = .init(confirmed)
      self.resumedFrom = resumedFrom
      self.seconds = seconds
      self.goodput = .init(goodput)
      self.bytesOnAir = bytesOnAir
    }
  }
}
