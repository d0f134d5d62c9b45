import OTAReport

/// What the tests read of `otad status --json`, decoded as the documented type (OTAReport's
/// `DeviceStatusReport`): a field renamed or retyped fails to decode, where a dictionary read would
/// quietly say nil.
extension DeviceStatusReport {
  /// The slot named `name` ("A" or "B").
  func slot(_ name: String) -> Slot? { slots.first { $0.slot == name } }

  /// The version the running slot holds.
  var runningVersion: String? { slot(running)?.version }

  /// The transfer journal, when there is one.
  var journal: Journal? {
    if case .journal(let journal) = transfer { journal } else { nil }
  }
}
