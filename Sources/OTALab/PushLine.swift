/// One line of `otactl push --json` (docs/OTACTL.md), as the lab reads it.
public enum PushLine: Equatable, Sendable {
  case start(image: String, size: Int, version: String, link: String)
  case phase(String, t: Double)
  case progress(committed: Int, total: Int, bytesOnAir: Int, t: Double)
  case resume(offset: Int)
  case result(ok: Bool, exitCode: Int, error: String?, seconds: Double)
}
