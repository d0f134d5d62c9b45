import OTANordicDFU

extension DaemonConfiguration {
  /// What Secure DFU's init packets are checked against (`[nordic] secure-dfu-key`,
  /// `hardware-version`); nil when Secure DFU is off. A missing or unreadable key, or one that is no
  /// P-256 public key, is an error naming the file and what to give instead.
  public func secureDFUTrust(readFile: (String) -> String?) throws(ConfigurationError) -> SecureDFUDevice
    .Trust?
  {
    guard secureDFU else { return nil }
    guard let path = secureDFUKeyFile else {
      throw ConfigurationError(
        "Secure DFU needs the public key its init packets are signed with: [nordic] secure-dfu-key = \"PATH\" "
          + "(or --secure-dfu-key PATH), made by nrfutil keys display --key pk --format pem KEY")
    }
    guard let text = readFile(path) else {
      throw ConfigurationError("[nordic] secure-dfu-key: cannot read \(path)")
    }
    do {
      return try SecureDFUDevice.Trust(pem: text, hardwareVersion: nordicHardwareVersion)
    } catch {
      throw ConfigurationError("[nordic] secure-dfu-key: \(path): \(error)")
    }
  }
}
