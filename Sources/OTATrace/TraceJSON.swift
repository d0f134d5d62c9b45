/// Writes trace events as the JSON Object Format of the Trace Event Format, which Perfetto and
/// chrome://tracing open as it is: one event per line, keys in a fixed order.
public enum TraceJSON {
  /// The whole document; `dropped` (events a bounded builder left out) goes into its metadata.
  /// `earlier` are event lines of a document written before (`eventLines`), kept first as they are.
  public static func document(_ events: [TraceEvent], dropped: Int = 0, after earlier: [String] = [])
    -> String
  {
    var text = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"droppedEvents\":\(dropped)},\"traceEvents\":[\n"
    var lines = earlier
    for event in events {
      var line = ""
      append(event, to: &line)
      lines.append(line)
    }
    text += lines.joined(separator: ",\n")
    text += "\n]}\n"
    return text
  }

  /// The event lines of a document this type wrote (one event per line), to write them again ahead
  /// of new ones; empty for anything else (a new trace then starts).
  public static func eventLines(of document: String) -> [String] {
    guard document.hasPrefix("{\"displayTimeUnit\"") else { return [] }
    var lines: [String] = []
    for line in document.split(separator: "\n") where line.hasPrefix("{\"name\":") {
      var event = String(line)
      if event.hasSuffix(",") { event.removeLast() }
      guard event.hasSuffix("}") else { return [] }
      lines.append(event)
    }
    return lines
  }

  /// One event as a JSON object.
  public static func append(_ event: TraceEvent, to text: inout String) {
    text += "{\"name\":"
    appendString(event.name, to: &text)
    text += ",\"cat\":"
    appendString(event.category, to: &text)
    text += ",\"ph\":\"\(event.phase.rawValue)\",\"ts\":\(event.timestamp)"
    if let duration = event.duration { text += ",\"dur\":\(duration)" }
    text += ",\"pid\":\(event.pid),\"tid\":\(event.tid)"
    // An instant is drawn on its thread's track ("t"), not across the process or the whole trace.
    if event.phase == .instant { text += ",\"s\":\"t\"" }
    if !event.args.isEmpty {
      text += ",\"args\":{"
      for (index, argument) in event.args.enumerated() {
        if index > 0 { text += "," }
        appendString(argument.key, to: &text)
        text += ":"
        appendValue(argument.value, to: &text)
      }
      text += "}"
    }
    text += "}"
  }

  static func appendValue(_ value: TraceValue, to text: inout String) {
    switch value {
    case .string(let string): appendString(string, to: &text)
    case .integer(let integer): text += "\(integer)"
    case .number(let number): text += number.isFinite ? "\(number)" : "null"
    case .bool(let bool): text += bool ? "true" : "false"
    }
  }

  /// A JSON string: quotes, backslashes and control characters escaped.
  static func appendString(_ string: String, to text: inout String) {
    text += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case "\n": text += "\\n"
      case "\r": text += "\\r"
      case "\t": text += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: text.unicodeScalars.append(scalar)
      }
    }
    text += "\""
  }
}
