/// Where the gateway keeps its state (downloads, the actions it began, each serial's Bluetooth
/// identity): `--state-dir`, else `$HOME/.cache/otactl-gateway`. Without either it refuses to start
/// rather than fall back to a shared directory such as /tmp, where another user could plant or read
/// its files and its bindings would not outlive a reboot.
public enum GatewayStateDirectory {
  public struct Missing: Error, Equatable, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String {
      "no --state-dir given and HOME is not set (or is /): give the gateway a directory of its own, e.g. "
        + "--state-dir /var/lib/blueota-gateway (systemd: StateDirectory=blueota-gateway)"
    }
  }

  public static func path(given: String?, home: String?) throws(Missing) -> String {
    if let given, !given.isEmpty { return given }
    guard let home, home.hasPrefix("/"), home != "/" else { throw Missing() }
    return "\(home)/.cache/otactl-gateway"
  }
}
