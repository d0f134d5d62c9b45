import OTADBus

/// Which device a central wants: by address, by advertised name, or any that offers the OTA service.
public enum DeviceSelector: Equatable, Sendable, CustomStringConvertible {
  case address(String)
  case name(String)
  case anyOTADevice

  /// `AA:BB:CC:DD:EE:FF` is an address, anything else a name; empty means any OTA device.
  public init(_ text: String) {
    let parts = text.split(separator: ":")
    if parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) {
      self = .address(text.uppercased())
    } else if text.isEmpty {
      self = .anyOTADevice
    } else {
      self = .name(text)
    }
  }

  /// Whether a BlueZ Device1 object (its properties) is the one wanted and offers the OTA service.
  func matches(_ properties: [String: DBusValue]) -> Bool {
    let uuids = properties["UUIDs"]?.stringArray ?? []
    switch self {
    case .address(let address): return properties["Address"]?.stringValue?.uppercased() == address
    case .name(let name):
      return properties["Name"]?.stringValue == name || properties["Alias"]?.stringValue == name
    case .anyOTADevice: return uuids.contains(OTAUUID.service)
    }
  }

  public var description: String {
    switch self {
    case .address(let address): address
    case .name(let name): "'\(name)'"
    case .anyOTADevice: "any device offering the OTA service"
    }
  }
}
