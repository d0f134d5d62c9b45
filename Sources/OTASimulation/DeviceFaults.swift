/// What happens to the simulated device itself (as opposed to the air between it and the central).
public struct DeviceFaults: Equatable, Sendable {
  /// The chance, at a disconnect, that the device's process restarts from its storage as well.
  public var restartsOnDisconnect: Double
  /// The chance that such a restart is a power cut: writes not yet synced are lost or torn.
  public var powerCutsOnRestart: Double
  /// How long the device is unreachable while it restarts.
  public var restartTime: Duration

  public init(
    restartsOnDisconnect: Double = 0, powerCutsOnRestart: Double = 0,
    restartTime: Duration = .milliseconds(300)
  ) {
    self.restartsOnDisconnect = restartsOnDisconnect
    self.powerCutsOnRestart = powerCutsOnRestart
    self.restartTime = restartTime
  }

  /// Half the drops restart the device, half of those by a power cut.
  public static let hostile = DeviceFaults(restartsOnDisconnect: 0.5, powerCutsOnRestart: 0.5)
}
