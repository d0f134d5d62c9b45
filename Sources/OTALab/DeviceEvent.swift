/// One event of otad's own trace (`otad run --trace`), as the lab reads it back: the windows with
/// their check's result, the phases, connections, boot decisions, health checks and restarts.
public struct DeviceEvent: Codable, Equatable, Sendable {
  public var name: String
  /// Wall-clock microseconds, and the slice's duration (0 for an instant).
  public var time: UInt64
  public var duration: UInt64
  /// The event's arguments, as text.
  public var args: [String: String]

  public init(name: String, time: UInt64, duration: UInt64 = 0, args: [String: String] = [:]) {
    self.name = name
    self.time = time
    self.duration = duration
    self.args = args
  }

  func integer(_ key: String) -> Int? { args[key].flatMap { Int($0) } }
}
