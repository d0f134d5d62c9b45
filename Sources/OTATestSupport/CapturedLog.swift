import Logging
import Synchronization

/// A swift-log destination that keeps every line in memory, for tests that check what was logged.
public final class CapturedLog: Sendable {
  public struct Line: Sendable {
    public let level: Logger.Level
    public let message: String
    public let metadata: Logger.Metadata

    /// "level message", as the tests compare it.
    public var text: String { "\(level) \(message)" }
  }

  private let storage = Mutex<[Line]>([])

  public init() {}

  /// Every line logged so far, in order.
  public var lines: [Line] { storage.withLock { $0 } }
  /// Every line logged so far as "level message".
  public var messages: [String] { lines.map(\.text) }

  /// A logger at trace level whose lines land here.
  public var logger: Logger { Logger(label: "test") { _ in Handler(log: self) } }

  struct Handler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(
      level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
      function: String, line: UInt
    ) {
      let line = Line(
        level: level, message: "\(message)", metadata: self.metadata.merging(metadata ?? [:]) { $1 })
      log.storage.withLock { $0.append(line) }
    }
  }
}
