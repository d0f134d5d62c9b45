import OTASystem
import Synchronization

/// A `SystemCallObserver` for tests: records every call with its result, and fails or shortens the
/// calls its rules name. Install it for the calls of a body with `run(_:)`.
public final class SystemCallTrace: SystemCallObserver {
  /// One recorded call and how it ended.
  public struct Entry: Sendable, Hashable, CustomStringConvertible {
    public let call: SystemCall
    public let result: Result<Int, Errno>

    public var description: String {
      switch result {
      case .success: call.description
      case .failure(let code): "\(call) -> \(code.name)"
      }
    }
  }

  /// What to do to the next `times` calls named `name` (and, if given, about `path`).
  public struct Rule: Sendable {
    public var name: SystemCallName
    public var path: String?
    public var decision: SystemCallDecision
    public var times: Int

    public init(_ name: SystemCallName, path: String? = nil, _ decision: SystemCallDecision, times: Int = 1) {
      self.name = name
      self.path = path
      self.decision = decision
      self.times = times
    }
  }

  private struct State {
    var entries: [Entry] = []
    var rules: [Rule]
  }

  private let state: Mutex<State>

  public init(rules: [Rule] = []) { state = Mutex(State(rules: rules)) }

  /// Everything recorded so far.
  public var entries: [Entry] { state.withLock { $0.entries } }

  /// The recorded calls as text: "open /tmp/x.tmp", "pwrite 5", "fsync -> EIO".
  public var lines: [String] { entries.map(\.description) }

  /// Runs `body` with this trace observing the calls it makes (in this task only).
  public func run<T>(_ body: () throws -> T) rethrows -> T {
    try SystemCalls.$observer.withValue(self) { try body() }
  }

  public func decide(_ call: SystemCall) -> SystemCallDecision {
    state.withLock { state in
      guard
        let index = state.rules.firstIndex(where: {
          $0.times > 0 && $0.name == call.name && ($0.path == nil || $0.path == call.path)
        })
      else { return .proceed }
      state.rules[index].times -= 1
      return state.rules[index].decision
    }
  }

  public func record(_ call: SystemCall, result: Result<Int, Errno>) {
    state.withLock { $0.entries.append(Entry(call: call, result: result)) }
  }
}
