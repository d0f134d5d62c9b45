import FlyingFox
import FlyingSocks
import Foundation
import OTALab

/// The page, the state and the buttons over HTTP on the loopback address.
enum LabServer {
  static func make(model: LabModel, port: UInt16, bigImage: String?) async throws -> HTTPServer {
    // IPv4's loopback address, as printed (FlyingFox's `.loopback` is IPv6's).
    // Quiet: a request per poll would fill the terminal.
    let server = HTTPServer(
      address: try sockaddr_in.inet(ip4: "127.0.0.1", port: port), logger: DisabledLogger.disabled)
    await server.appendRoute("GET /") { request in
      if let refused = refusal(request) { return refused }
      return HTTPResponse(
        statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: Data(LabPage.html.utf8))
    }
    await server.appendRoute("GET /state") { request in
      if let refused = refusal(request) { return refused }
      return HTTPResponse(
        statusCode: .ok, headers: [.contentType: "application/json", .init("Cache-Control"): "no-store"],
        body: model.snapshotJSON())
    }
    await server.appendRoute("POST /action/*") { request in
      if let refused = refusal(request) { return refused }
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

  /// 403 for a request from another site or through a name that is not the loopback's.
  private static func refusal(_ request: HTTPRequest) -> HTTPResponse? {
    guard
      let why = LabRequestGuard.refusal(
        method: request.method.rawValue, host: request.headers[.host],
        origin: request.headers[HTTPHeader("Origin")])
    else { return nil }
    return HTTPResponse(statusCode: .forbidden, body: Data((why + "\n").utf8))
  }
}
