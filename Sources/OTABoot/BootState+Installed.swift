import OTAStorage
import OTATrust

extension BootState {
  /// The confirmed image, as updates are judged against it.
  public var installed: InstalledImage {
    InstalledImage(version: self[confirmed].version, securityFloor: securityFloor)
  }
}
