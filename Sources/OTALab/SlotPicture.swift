/// The slot being written, drawn as `cells` equal parts of the image: each empty, committed (written
/// and checked: its window's CRC matched and the journal moved past it), in flight (past the
/// committed offset, within the window being received), or failed (a window over it failed its check
/// and was asked again), or resent (committed after a failed check). Made from the journal (otad status) and the device's window events.
public struct SlotPicture: Codable, Equatable, Sendable {
  public enum Cell: Character, Sendable {
    case empty = "."
    case inFlight = "w"
    case committed = "c"
    case failed = "x"
    /// Committed after a failed check and a resend.
    case resent = "r"
  }

  public var slot: String
  public var size: Int
  public var committed: Int
  public var windowsChecked: Int
  public var windowsFailed: Int
  /// One character per cell (`Cell`'s raw values): compact for the page, whatever the image's size.
  public var cells: String

  /// `windows`: the device's window events since the transfer began (oldest first), beside
  /// `checkedEarlier` windows checked and left out of them (`DeviceEventDigest`); `receiving`:
  /// whether the device is taking chunks past `committed` now.
  public init(
    slot: String, size: Int, committed: Int, windows: [DeviceEvent], checkedEarlier: Int = 0, receiving: Bool,
    windowCapacity: Int, cells count: Int = 128
  ) {
    self.slot = slot
    self.size = size
    self.committed = min(committed, size)
    let checked = windows.filter { $0.args["crc"] == "ok" }
    let failed = windows.filter { $0.args["crc"] != nil && $0.args["crc"] != "ok" }
    windowsChecked = checkedEarlier + checked.count
    windowsFailed = failed.count
    guard size > 0, count > 0 else {
      cells = ""
      return
    }
    var picture = [Cell](repeating: .empty, count: count)
    func span(_ start: Int, _ end: Int) -> Range<Int> {
      let first = min(count, start * count / size)
      let last = min(count, (end * count + size - 1) / size)
      return first..<max(first, last)
    }
    if receiving, self.committed < size {
      for index in span(self.committed, min(size, self.committed + windowCapacity)) {
        picture[index] = .inFlight
      }
    }
    let committedCells = span(0, self.committed)
    for index in committedCells { picture[index] = .committed }
    for window in failed {
      guard let offset = window.integer("offset"), let length = window.integer("length"), offset < size else {
        continue
      }
      for index in span(offset, min(size, offset + max(length, 1))) {
        picture[index] = committedCells.contains(index) ? .resent : .failed
      }
    }
    cells = String(picture.map(\.rawValue))
  }
}
