import OTAStorage
import OTASystem

extension MemoryMedium {
  /// A failure to inject into one operation.
  public enum Fault: Sendable, Equatable, CaseIterable {
    /// The operation fails with EIO and changes nothing.
    case ioError
    /// The operation fails with ENOSPC and changes nothing.
    case noSpace
    /// A write stores only the first half of its bytes, then throws `.shortWrite`. On an operation
    /// that stores no bytes (a read, sync, rename...) it behaves like `.ioError`.
    case shortWrite
    /// The operation does not happen (a slot write may leave a torn prefix, decided at `reboot`) and
    /// every later operation throws `.powerCut` until `reboot(seed:)`.
    case powerCut
  }

  /// The kinds of counted operation, so that a fault can target, say, only syncs.
  public enum Operation: Sendable, Hashable, CaseIterable {
    case slotRead
    case slotWrite
    case slotSync
    case slotPrepare
    /// Reading a record.
    case recordLoad
    /// Writing a record's temporary file (`name.tmp`, created or truncated), or a record in place.
    case recordWrite
    /// Fsyncing a record's temporary file, or fdatasyncing a record written in place.
    case recordSync
    /// Renaming a record: the temporary file over the record, or the record aside.
    case recordRename
    /// Unlinking a record.
    case recordUnlink
    /// Fsyncing the record directory: what makes renames and unlinks durable.
    case directorySync

    /// Every operation that stores bytes.
    public static let writes: Set<Operation> = [.slotWrite, .recordWrite]
    /// Every operation that makes something durable.
    public static let syncs: Set<Operation> = [.slotSync, .recordSync, .directorySync]
    /// Every operation on a slot.
    public static let slotOperations: Set<Operation> = [.slotRead, .slotWrite, .slotSync, .slotPrepare]
    /// Every operation on the record directory.
    public static let recordOperations: Set<Operation> = Set(allCases).subtracting(slotOperations)
  }

  /// Plans `fault` for a future operation: `n` matching operations succeed, the next matching one
  /// fails. `n` counts from now, so `inject(.powerCut, atOperation: 0)` cuts the very next operation
  /// and, without a filter, the fault hits operation number `operationCount + n + 1`.
  ///
  /// - Parameter kinds: only operations of these kinds count towards `n` and can fail; nil means all.
  ///
  /// Each fault fires once. If two land on the same operation, the one injected first fires and the
  /// other moves to the next matching operation. `reboot(seed:)` clears the plan.
  public func inject(_ fault: Fault, atOperation n: Int, of kinds: Set<Operation>? = nil) {
    precondition(n >= 0, "a fault cannot be planned for an operation in the past")
    state.withLock { $0.faults.planned.append(PlannedFault(fault: fault, kinds: kinds, remaining: n)) }
  }

  /// Forgets every planned fault that has not fired yet.
  public func clearFaults() {
    state.withLock { $0.faults.planned.removeAll() }
  }

  /// How many planned faults have not fired yet.
  public var pendingFaultCount: Int {
    state.withLock { $0.faults.planned.count }
  }
}

/// A fault waiting for its operation.
struct PlannedFault: Sendable {
  let fault: MemoryMedium.Fault
  let kinds: Set<MemoryMedium.Operation>?
  /// Matching operations still to let through.
  var remaining: Int

  func matches(_ operation: MemoryMedium.Operation) -> Bool {
    kinds?.contains(operation) ?? true
  }
}

/// The planned faults, in the order they were injected.
struct FaultPlan: Sendable {
  var planned: [PlannedFault] = []

  /// Advances the plan by one operation of kind `operation` and returns the fault that fires on it.
  mutating func take(_ operation: MemoryMedium.Operation) -> MemoryMedium.Fault? {
    var fired: MemoryMedium.Fault?
    var index = planned.startIndex
    while index < planned.endIndex {
      guard planned[index].matches(operation) else {
        index += 1
        continue
      }
      if planned[index].remaining > 0 {
        planned[index].remaining -= 1
        index += 1
      } else if fired == nil {
        fired = planned[index].fault
        planned.remove(at: index)
      } else {
        index += 1  // Same operation as an earlier fault: waits for the next matching operation.
      }
    }
    return fired
  }
}

extension MemoryState {
  /// Starts one counted operation: refuses it while the power is off, counts it, and returns the
  /// fault planned for it, if any.
  mutating func begin(_ operation: MemoryMedium.Operation) throws(StorageError) -> MemoryMedium.Fault? {
    guard !isPoweredOff else { throw .powerCut }
    operationCount += 1
    operationCounts[operation, default: 0] += 1
    return faults.take(operation)
  }

  /// Fails the current operation the way `fault` says, for faults with no operation-specific part
  /// (callers handle a write's `.shortWrite` and a slot write's torn `.powerCut` themselves).
  mutating func fail(_ fault: MemoryMedium.Fault, operation: String, path: String) throws(StorageError)
    -> Never
  {
    switch fault {
    case .ioError, .shortWrite:
      throw .system(operation: operation, path: path, errno: Errno.io)
    case .noSpace:
      throw .system(operation: operation, path: path, errno: Errno.noSpace)
    case .powerCut:
      isPoweredOff = true
      throw .powerCut
    }
  }
}
