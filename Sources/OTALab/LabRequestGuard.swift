/// Which HTTP requests the lab answers. It listens on 127.0.0.1, but any page in the same browser
/// can send it a POST (a form needs no CORS preflight), and a page behind a DNS name rebound to
/// 127.0.0.1 can read it: so a request must name the loopback host, and a button's POST must come
/// from the lab's own page (its Origin, when the browser sends one, is the lab's address).
public enum LabRequestGuard {
  /// Why the request is refused, or nil when it is answered.
  public static func refusal(method: String, host: String?, origin: String?) -> String? {
    guard let host, isLoopback(host) else {
      return "the Host header must be 127.0.0.1 or localhost (got \(host ?? "none"))"
    }
    if method.uppercased() == "POST", let origin, origin != "http://" + host {
      return "a button's request must come from the lab's page (Origin \(origin), not http://\(host))"
    }
    return nil
  }

  /// "127.0.0.1" or "localhost", with or without a port.
  static func isLoopback(_ host: String) -> Bool {
    let parts = host.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2 else { return false }
    if parts.count == 2,
      parts[1].isEmpty || !parts[1].allSatisfy(\.isASCII) || !parts[1].allSatisfy(\.isNumber)
    {
      return false
    }
    return parts[0] == "127.0.0.1" || parts[0].lowercased() == "localhost"
  }
}
