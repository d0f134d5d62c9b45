/// `--listen HOST:PORT`, read: a dotted IPv4 address (0.0.0.0 for every interface) and a port.
public struct LabListenAddress: Equatable, Sendable {
  public var address: String
  public var port: UInt16

  public init(address: String, port: UInt16) {
    self.address = address
    self.port = port
  }

  /// Reads `HOST:PORT`; the error says what to give.
  public init(parsing text: String) throws(LabListenError) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, LabRequestGuard.isIPv4(String(parts[0])) else {
      throw LabListenError("--listen \(text): give an IPv4 address and a port, e.g. 0.0.0.0:8080")
    }
    guard let port = UInt16(parts[1]) else {
      throw LabListenError("--listen \(text): the port must be 0 to 65535")
    }
    address = String(parts[0])
    self.port = port
  }

  public var isLoopback: Bool { address.hasPrefix("127.") }
}

public struct LabListenError: Error, Equatable, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}
