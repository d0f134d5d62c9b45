import FlyingFox
import FlyingSocks
import Foundation
import OTALab
import Synchronization

/// Whose device a request is about: the lab's only one, or in class mode the session's.
enum LabSite: Sendable {
  case solo(LabModel)
  case classroom(LabClassroom)
}

/// The hosts requests may name: in class mode the listening port is known once listening.
final class LabGate: Sendable {
  let hosts: Mutex<LabRequestGuard.Hosts>
  init(_ hosts: LabRequestGuard.Hosts) { self.hosts = Mutex(hosts) }
}

/// The page, the state and the buttons over HTTP: on the loopback address alone, or in class
/// mode on the teacher's address with a join page and a session cookie per student.
enum LabServer {
  static let cookie = "blueota_lab"

  static func make(
    site: LabSite, address: sockaddr_in, gate: LabGate, bigImage: String?
  ) async throws -> HTTPServer {
    // Quiet: a request per poll would fill the terminal.
    let server = HTTPServer(address: address, logger: DisabledLogger.disabled)
    await server.appendRoute("GET /") { request in
      if let refused = refusal(request, gate) { return refused }
      guard model(request, site) != nil else { return html(LabJoinPage.html(), .ok) }
      return html(LabPage.html, .ok)
    }
    await server.appendRoute("POST /join") { request in
      if let refused = refusal(request, gate) { return refused }
      guard case .classroom(let classroom) = site else {
        return HTTPResponse(statusCode: .notFound, body: Data("no class here: ota-lab runs alone\n".utf8))
      }
      let fields = LabForm.fields(String(decoding: try await request.bodyData, as: UTF8.self))
      let address = peerAddress(request)
      let joined = await Task.detached { () -> Result<LabSessionTable.Seat, any Error> in
        Result {
          try classroom.join(code: fields["code"] ?? "", name: fields["name"] ?? "", address: address)
        }
      }.value
      switch joined {
      case .success(let seat):
        var headers = HTTPHeaders()
        headers[.location] = "/"
        headers[.setCookie] = "\(cookie)=\(seat.token); Path=/; HttpOnly; SameSite=Strict"
        return HTTPResponse(statusCode: .seeOther, headers: headers)
      case .failure(let refusal as LabSessionTable.Refusal):
        let status: HTTPStatusCode =
          switch refusal {
          case .wrongCode: .forbidden
          case .tooManyWrongCodes: .tooManyRequests
          case .full, .tooManyFromAddress: .serviceUnavailable
          case .badName, .nameTaken: .conflict
          }
        return html(LabJoinPage.html(message: refusal.description), status)
      case .failure(let error):
        return html(LabJoinPage.html(message: "\(error)"), .internalServerError)
      }
    }
    await server.appendRoute("GET /state") { request in
      if let refused = refusal(request, gate) { return refused }
      guard let model = model(request, site) else { return notJoined }
      return HTTPResponse(
        statusCode: .ok, headers: [.contentType: "application/json", .init("Cache-Control"): "no-store"],
        body: model.snapshotJSON())
    }
    await server.appendRoute("POST /action/*") { request in
      if let refused = refusal(request, gate) { return refused }
      guard let model = model(request, site) else { return notJoined }
      let name = String(request.path.split(separator: "/").last ?? "")
      guard let action = LabAction(rawValue: name) else {
        return HTTPResponse(statusCode: .notFound, body: Data("no action \(name)\n".utf8))
      }
      let body = String(decoding: try await request.bodyData, as: UTF8.self)
      // The actions wait on processes (a power cut waits for otad's socket): off the server's tasks.
      let outcome = await Task.detached { () -> Result<String, any Error> in
        Result { try action.perform(on: model, body: body, bigImage: bigImage) }
      }.value
      switch outcome {
      case .success(let said):
        model.note(said)
        return HTTPResponse(statusCode: .ok, body: Data((said + "\n").utf8))
      case .failure(let error):
        model.note("\(name) refused: \(error)")
        return HTTPResponse(statusCode: .conflict, body: Data("\(error)\n".utf8))
      }
    }
    return server
  }

  static let notJoined = HTTPResponse(
    statusCode: .unauthorized,
    body: Data("join the class first: open the lab's page and give the class code\n".utf8))

  static func html(_ text: String, _ status: HTTPStatusCode) -> HTTPResponse {
    HTTPResponse(
      statusCode: status, headers: [.contentType: "text/html; charset=utf-8"], body: Data(text.utf8))
  }

  /// The request's device: the lab's one, or the one of the session its cookie names.
  /// The peer's address without its port ("" when the server could not tell): seats and wrong
  /// codes are counted per address.
  static func peerAddress(_ request: HTTPRequest) -> String {
    switch request.remoteAddress {
    case .ip4(let host, _)?, .ip6(let host, _)?: host
    case .unix(let path)?: path
    case nil: ""
    }
  }

  static func model(_ request: HTTPRequest, _ site: LabSite) -> LabModel? {
    switch site {
    case .solo(let model): model
    case .classroom(let classroom):
      classroom.model(token: LabForm.cookie(cookie, in: request.headers[.cookie]))
    }
  }

  /// 403 for a request from another site or through a name that is not the lab's address; 413 for
  /// a body longer than a button's or a join's.
  private static func refusal(_ request: HTTPRequest, _ gate: LabGate) -> HTTPResponse? {
    if let why = LabRequestGuard.refusal(
      method: request.method.rawValue, host: request.headers[.host],
      origin: request.headers[HTTPHeader("Origin")], hosts: gate.hosts.withLock { $0 })
    {
      return HTTPResponse(statusCode: .forbidden, body: Data((why + "\n").utf8))
    }
    if let why = LabRequestGuard.bodyRefusal(
      contentLength: request.headers[.contentLength], transferEncoding: request.headers[.transferEncoding])
    {
      return HTTPResponse(statusCode: .payloadTooLarge, body: Data((why + "\n").utf8))
    }
    return nil
  }
}
