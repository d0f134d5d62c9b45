import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

/// A DDI server for one test on 127.0.0.1: each route answers as the test says, and every request
/// is kept (method, path, headers) so the test can check what the gateway sent.
final class ScriptedServer: Sendable {
  struct Seen: Sendable {
    var method: String
    var path: String
    var headers: [String: String]
    var body: String
  }

  let server: HTTPServer
  let port: UInt16
  private let task: Task<Void, any Error>
  private final class Log: Sendable {
    let items = Mutex<[Seen]>([])
  }
  private let seen = Log()

  var url: String { "http://127.0.0.1:\(port)" }
  var requests: [Seen] { seen.items.withLock { $0 } }

  /// `routes`: "METHOD /path" to a handler of the request (its Range header among the headers).
  init(_ routes: [(String, @Sendable (Seen) -> (Int, [String: String], Data))]) async throws {
    server = HTTPServer(
      address: try sockaddr_in.inet(ip4: "127.0.0.1", port: 0), logger: DisabledLogger.disabled)
    for (route, handler) in routes {
      await server.appendRoute(HTTPRoute(stringLiteral: route)) { [seen] request in
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
        let body = String(decoding: try await request.bodyData, as: UTF8.self)
        let entry = Seen(method: request.method.rawValue, path: request.path, headers: headers, body: body)
        seen.items.withLock { $0.append(entry) }
        let (status, answerHeaders, data) = handler(entry)
        var out = HTTPHeaders()
        for (name, value) in answerHeaders { out[HTTPHeader(name)] = value }
        return HTTPResponse(statusCode: HTTPStatusCode(status, phrase: "X"), headers: out, body: data)
      }
    }
    let server = self.server
    task = Task { try await server.run() }
    try await server.waitUntilListening()
    guard case .ip4(_, let port) = await server.listeningAddress else {
      throw CocoaError(.fileReadUnknown)
    }
    self.port = port
  }

  func stop() async {
    await server.stop()
    task.cancel()
  }
}

/// Runs blocking work (curl) on its own thread, so the server's tasks keep their threads.
func offThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
  await withCheckedContinuation { continuation in
    Thread { continuation.resume(returning: work()) }.start()
  }
}
