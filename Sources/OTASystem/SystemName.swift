import Glibc

/// What `uname(2)` says of this system: SMP's OS info reports it.
public struct SystemName: Equatable, Sendable {
  public var kernelName = ""
  public var nodeName = ""
  public var release = ""
  public var version = ""
  public var machine = ""

  /// The running system's names; empty fields when the call fails (it does not on Linux).
  public static func current() -> SystemName {
    var names = utsname()
    guard SystemCalls.check(.uname, { uname(&names) }) == nil else { return SystemName() }
    return SystemName(
      kernelName: field(&names.sysname), nodeName: field(&names.nodename), release: field(&names.release),
      version: field(&names.version), machine: field(&names.machine))
  }

  private static func field<T>(_ value: inout T) -> String {
    withUnsafeBytes(of: &value) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
  }
}
