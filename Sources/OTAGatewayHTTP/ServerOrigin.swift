/// A URL's origin (scheme, host, port) and path, with the scheme's default port made explicit:
/// `http://10.0.2.100/` and `http://10.0.2.100:80/` are one server, as a browser's same-origin rule
/// says. The gateway sends its token only to URLs under its own server's origin and path.
struct ServerOrigin: Equatable {
  var scheme: String
  var host: String
  var port: Int
  var path: String

  init?(_ url: String) {
    guard let schemeEnd = url.range(of: "://") else { return nil }
    scheme = url[..<schemeEnd.lowerBound].lowercased()
    let defaultPort: Int
    switch scheme {
    case "http": defaultPort = 80
    case "https": defaultPort = 443
    default: return nil
    }
    let rest = url[schemeEnd.upperBound...]
    let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
    var authority = rest[..<authorityEnd]
    // user:password@ never names another server than the host after it.
    if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
    if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
      guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else {
        return nil
      }
      self.port = port
      host = authority[..<colon].lowercased()
    } else {
      port = defaultPort
      host = authority.lowercased()
    }
    guard !host.isEmpty else { return nil }
    let tail = rest[authorityEnd...]
    let pathEnd = tail.firstIndex { $0 == "?" || $0 == "#" } ?? tail.endIndex
    path = String(tail[..<pathEnd])
  }

  /// Whether `url` lies under this server: the same origin, and a path below this one's.
  func contains(_ url: String) -> Bool {
    guard let other = ServerOrigin(url), other.scheme == scheme, other.host == host, other.port == port
    else { return false }
    let base = path.hasSuffix("/") ? String(path.dropLast()) : path
    return other.path.hasPrefix(base + "/")
  }
}
