import Foundation
import OTAGateway

/// How the gateway proves itself to the server, as hawkBit does it: one gateway token for every
/// target of the tenant (`Authorization: GatewayToken ...`), or one token per target
/// (`Authorization: TargetToken ...`), or none (a server with device authentication off).
public enum DDIAuthorization: Sendable {
  case none
  case gateway(String)
  case targets([String: String])

  /// The header for requests on behalf of `controllerId`, nil when there is none to send.
  public func header(for controllerId: String) -> String? {
    switch self {
    case .none: nil
    case .gateway(let token): "Authorization: GatewayToken \(token)"
    case .targets(let tokens): tokens[controllerId].map { "Authorization: TargetToken \($0)" }
    }
  }
}

/// Why a DDI exchange failed, in words that name the cause and what to do.
public enum DDIError: Error, Sendable, CustomStringConvertible {
  case transport(HTTPFailure)
  case unauthorized(status: Int, url: String)
  case status(Int, url: String, body: String)
  case garbage(url: String, what: String, body: String)
  case foreignLink(String)

  public var description: String {
    switch self {
    case .transport(let failure): "no answer from \(failure)"
    case .unauthorized(let status, let url):
      "the server refused the token (HTTP \(status)) at \(url): check the token file, or whether the "
        + "token expired or was revoked on the server"
    case .status(let status, let url, let body):
      "HTTP \(status) from \(url)\(body.isEmpty ? "" : ": \(body)")"
    case .garbage(let url, let what, let body):
      "\(url) answered something that is not \(what)\(body.isEmpty ? "" : ": '\(body)'")"
    case .foreignLink(let href):
      "the server sent a link to another server (\(href.prefix(120))): the gateway sends its token to its own server only"
    }
  }

  /// The server said the target does not exist (HTTP 404).
  public var isNotFound: Bool { if case .status(404, _, _) = self { true } else { false } }
}

/// A hawkBit DDI server seen from the gateway: `{server}/{tenant}/controller/v1/{controllerId}`.
public struct DDIClient: Sendable {
  public let server: String
  public let tenant: String
  public let authorization: DDIAuthorization
  public let http: CurlHTTPClient
  /// The server's origin and path, parsed once: the token goes to URLs under it only.
  let origin: ServerOrigin?

  public init(server: String, tenant: String, authorization: DDIAuthorization, http: CurlHTTPClient) {
    self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
    origin = ServerOrigin(self.server)
    self.tenant = tenant
    self.authorization = authorization
    self.http = http
  }

  /// "http" or "https".
  public var scheme: String { server.lowercased().hasPrefix("https://") ? "https" : "http" }

  public func controllerURL(_ controllerId: String) -> String {
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
    let id = controllerId.addingPercentEncoding(withAllowedCharacters: allowed) ?? controllerId
    return "\(server)/\(tenant)/controller/v1/\(id)"
  }

  /// The target's base: what the server wants of it now.
  public func poll(_ controllerId: String) throws(DDIError) -> DDIControllerBase {
    try json(DDIControllerBase.self, "a DDI controller base", get(controllerURL(controllerId), controllerId))
  }

  /// The deployment, or nil when the server has none for the target any more (goosebit answers
  /// `null` when the action was closed or withdrawn between the poll and this request).
  public func deployment(_ link: DDILink, for controllerId: String) throws(DDIError) -> DDIDeploymentBase? {
    let answer = try get(try own(link.href), controllerId)
    if String(decoding: answer.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "null"
    {
      return nil
    }
    return try json(DDIDeploymentBase.self, "a DDI deployment", answer)
  }

  public func cancelAction(_ link: DDILink, for controllerId: String) throws(DDIError) -> DDICancelAction {
    try json(DDICancelAction.self, "a DDI cancel action", get(try own(link.href), controllerId))
  }

  /// Feedback on the action `link` names (a deploymentBase or cancelAction link).
  public func feedback(_ feedback: DDIFeedback, on link: DDILink, for controllerId: String) throws(DDIError) {
    var stamped = feedback
    stamped.timestamp = Int64(Date().timeIntervalSince1970 * 1000)
    let base = try own(link.href)
    let path = base.split(separator: "?", maxSplits: 1)[0]
    try send("POST", "\(path)/feedback", controllerId, body: stamped)
  }

  /// The target's attributes.
  public func configData(_ data: [String: String], for controllerId: String) throws(DDIError) {
    try send(
      "PUT", "\(controllerURL(controllerId))/configData", controllerId, body: DDIConfigData(data: data))
  }

  /// The header to send with a download from `url`: the token goes only to the server itself.
  public func downloadHeaders(_ url: String, for controllerId: String) -> [String] {
    guard origin?.contains(url) == true, let header = authorization.header(for: controllerId)
    else { return [] }
    return [header]
  }

  func own(_ href: String) throws(DDIError) -> String {
    guard origin?.contains(href) == true else { throw .foreignLink(href) }
    return href
  }

  func get(_ url: String, _ controllerId: String) throws(DDIError) -> (url: String, body: [UInt8]) {
    try exchange(HTTPRequest(method: "GET", url: url, headers: headers(controllerId)))
  }

  func send(_ method: String, _ url: String, _ controllerId: String, body: some Encodable)
    throws(DDIError)
  {
    let bytes: [UInt8]
    do {
      bytes = Array(try JSONEncoder().encode(body))
    } catch {
      throw .garbage(url: url, what: "encodable", body: "\(error)")
    }
    _ = try exchange(HTTPRequest(method: method, url: url, headers: headers(controllerId), body: bytes))
  }

  private func headers(_ controllerId: String) -> [String] {
    authorization.header(for: controllerId).map { [$0] } ?? []
  }

  private func exchange(_ request: HTTPRequest) throws(DDIError) -> (url: String, body: [UInt8]) {
    let response: HTTPResponse
    do {
      response = try http.send(request)
    } catch {
      throw .transport(error)
    }
    switch response.status {
    case 200..<300: return (request.url, response.body)
    case 401, 403: throw .unauthorized(status: response.status, url: request.url)
    default: throw .status(response.status, url: request.url, body: Self.snippet(response.body))
    }
  }

  func json<T: Decodable>(_ type: T.Type, _ what: String, _ answer: (url: String, body: [UInt8]))
    throws(DDIError)
    -> T
  {
    do {
      return try JSONDecoder().decode(T.self, from: Data(answer.body))
    } catch {
      throw .garbage(url: answer.url, what: what, body: Self.snippet(answer.body))
    }
  }

  /// The first 80 characters of a body, printable, for a log line.
  static func snippet(_ body: [UInt8]) -> String {
    let text = String(decoding: body.prefix(80), as: UTF8.self)
    return String(
      text.map {
        $0.isASCII && ($0.isLetter || $0.isNumber || $0.isPunctuation || $0.isSymbol || $0 == " ") ? $0 : "."
      })
  }
}
