import Logging
import OTASystem

/// The log handler of the programs that run as services (otad, `otactl gateway`): on the journal's
/// stream each line starts with its sd-daemon(3) priority and leaves the time to the journal; on any
/// other standard error the lines are swift-log's StreamLogHandler's, as before.
public struct JournalLogHandler: LogHandler {
  public var logLevel: Logger.Level = .info
  public var metadata: Logger.Metadata = [:]
  public var metadataProvider: Logger.MetadataProvider?
  private let label: String

  public init(label: String) { self.label = label }

  /// The handler for standard error as this process finds it: this one on the journal's stream,
  /// StreamLogHandler's otherwise.
  public static func standardError(label: String, level: Logger.Level = .info) -> any LogHandler {
    var handler: any LogHandler =
      JournalStream.isStandardError
      ? JournalLogHandler(label: label) : StreamLogHandler.standardError(label: label)
    handler.logLevel = level
    return handler
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    StandardStreams.writeError(line(event) + "\n")
  }

  /// One entry: `<4>label: message key=value ...`, each line of a message with the prefix.
  public func line(_ event: LogEvent) -> String {
    var merged = metadata
    if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
    if let own = event.metadata { merged.merge(own) { $1 } }
    var fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    if let error = event.error { fields.append("error=\(error)") }
    let text = (["\(label): \(event.message)"] + fields).joined(separator: " ")
    return JournalPriority.prefixed(text, level: event.level)
  }
}
