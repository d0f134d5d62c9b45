/// Which HTTP requests the lab answers. Alone it listens on 127.0.0.1, but any page in the same
/// browser can send it a POST (a form needs no CORS preflight), and a page behind a DNS name rebound
/// to 127.0.0.1 can read it: so a request must name the loopback host, and a button's POST must come
/// from the lab's own page (its Origin, when the browser sends one, is the lab's address). In class
/// mode it listens on an address of the teacher's choice: a request must then name that address (an
/// IP literal, which no rebound name is) and its port, and a POST must come from a page of it.
public enum LabRequestGuard {
  /// The hosts a request may name.
  public enum Hosts: Equatable, Sendable {
    /// 127.0.0.1 or localhost, on any port: the lab alone.
    case loopback
    /// Class mode listening on `address` (dotted IPv4; 0.0.0.0 for every interface) and `port`:
    /// the address itself (any IPv4 literal when it is 0.0.0.0), 127.0.0.1 or localhost, with that
    /// port.
    case listening(address: String, port: Int)
  }

  /// The largest body a request may carry: a button's body is a few words, a join a code and a name.
  public static let bodyLimit = 4096

  /// Why the request is refused, or nil when it is answered.
  public static func refusal(
    method: String, host: String?, origin: String?, hosts: Hosts = .loopback
  ) -> String? {
    guard let host, accepts(host, hosts) else {
      return "the Host header must be \(expected(hosts)) (got \(host ?? "none"))"
    }
    if method.uppercased() == "POST", let origin, origin != "http://" + host {
      return "a button's request must come from the lab's page (Origin \(origin), not http://\(host))"
    }
    return nil
  }

  /// Why a request's body is refused before it is read (too long, or of no stated length), or nil.
  public static func bodyRefusal(contentLength: String?, transferEncoding: String?) -> String? {
    if transferEncoding != nil { return "send the body with a Content-Length, not chunked" }
    guard let contentLength else { return nil }
    guard let length = Int(contentLength), length >= 0 else { return "a Content-Length that is no length" }
    return length > bodyLimit ? "a body of \(length) bytes: at most \(bodyLimit)" : nil
  }

  static func expected(_ hosts: Hosts) -> String {
    switch hosts {
    case .loopback: "127.0.0.1 or localhost"
    case .listening("0.0.0.0", let port): "this machine's IP address, port \(port)"
    case .listening(let address, let port): "\(address):\(port)"
    }
  }

  static func accepts(_ host: String, _ hosts: Hosts) -> Bool {
    let parts = host.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2 else { return false }
    if parts.count == 2,
      parts[1].isEmpty || !parts[1].allSatisfy(\.isASCII) || !parts[1].allSatisfy(\.isNumber)
    {
      return false
    }
    let name = String(parts[0])
    let loopbackName = name == "127.0.0.1" || name.lowercased() == "localhost"
    switch hosts {
    case .loopback:
      return loopbackName
    case .listening(let address, let port):
      guard parts.count == 2, Int(parts[1]) == port else { return false }
      if loopbackName { return true }
      return address == "0.0.0.0" ? isIPv4(name) : name == address
    }
  }

  /// Four decimal numbers 0–255 without leading zeros, dot-separated: an address, never a name.
  static func isIPv4(_ text: String) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4
      && parts.allSatisfy { part in
        (1...3).contains(part.count) && part.allSatisfy { ("0"..."9").contains($0) }
          && (part.count == 1 || part.first != "0") && (Int(part) ?? 256) <= 255
      }
  }
}
