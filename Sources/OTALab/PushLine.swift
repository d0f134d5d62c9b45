/// One line of `otactl push --json` (docs/OTACTL.md), as the lab reads it.
public enum PushLine: Equatable, Sendable {
  /// What a push that succeeded sent, from its result line: every data-write byte on air, how
  /// ("plain", "compressed", "block copies", "delta"), and what plain chunks would have sent.
  public struct Air: Equatable, Sendable {
    public var bytesOnAir: Int
    public var transferMode: String
    public var plainBytesOnAir: Int

    public init(bytesOnAir: Int, transferMode: String, plainBytesOnAir: Int) {
      self.bytesOnAir = bytesOnAir
      self.transferMode = transferMode
      self.plainBytesOnAir = plainBytesOnAir
    }
  }

  case start(image: String, size: Int, version: String, link: String)
  case phase(String, t: Double)
  case progress(committed: Int, total: Int, bytesOnAir: Int, t: Double)
  case resume(offset: Int)
  case result(ok: Bool, exitCode: Int, error: String?, seconds: Double, air: Air? = nil)
}
