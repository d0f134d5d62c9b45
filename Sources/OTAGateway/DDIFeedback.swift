/// What the gateway sends a DDI server: feedback on an action, and a target's attributes.

/// `POST .../deploymentBase/{actionId}/feedback` (and `.../cancelAction/{id}/feedback`).
public struct DDIFeedback: Encodable, Sendable, Equatable {
  public enum Execution: String, Encodable, Sendable {
    case proceeding, closed, rejected, canceled, scheduled, resumed, downloaded, download
  }
  public enum Finished: String, Encodable, Sendable { case success, failure, none }
  public struct Progress: Encodable, Sendable, Equatable {
    public var cnt: Int
    public var of: Int
  }
  public struct Result: Encodable, Sendable, Equatable {
    public var finished: Finished
    public var progress: Progress?
  }
  public struct Status: Encodable, Sendable, Equatable {
    public var execution: Execution
    public var result: Result
    public var details: [String]
  }
  /// Milliseconds since 1970, as hawkBit's current DDI takes it.
  public var timestamp: Int64?
  public var status: Status

  public init(execution: Execution, finished: Finished, progress: Progress? = nil, details: [String]) {
    status = Status(
      execution: execution, result: Result(finished: finished, progress: progress), details: details)
  }

  /// The push is under way: `done` of `total` (percent, say).
  public static func proceeding(_ done: Int, of total: Int, _ detail: String) -> DDIFeedback {
    DDIFeedback(
      execution: .proceeding, finished: .none, progress: Progress(cnt: done, of: total), details: [detail])
  }

  /// The device runs the new image, confirmed.
  public static func success(_ details: [String]) -> DDIFeedback {
    DDIFeedback(execution: .closed, finished: .success, details: details)
  }

  /// The update did not happen or did not hold: the reason first.
  public static func failure(_ details: [String]) -> DDIFeedback {
    DDIFeedback(execution: .closed, finished: .failure, details: details)
  }
}

/// `PUT .../configData`: the target's attributes, merged into what the server keeps.
public struct DDIConfigData: Encodable, Sendable, Equatable {
  public var mode = "merge"
  public var data: [String: String]
  public init(data: [String: String]) { self.data = data }
}
