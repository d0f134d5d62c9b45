/// otad's events cut down to what the page draws, whatever the push's size: the last `recent`
/// events as they are; before them, only what the slot's picture and the boot panel need (the
/// transfer's PREPARE, its failed windows, boot decisions), and a count of the windows checked.
public struct DeviceEventDigest: Equatable, Sendable {
  public private(set) var events: [DeviceEvent] = []
  /// Windows of the current transfer checked ok among the events left out.
  public private(set) var windowsCheckedEarlier = 0

  public static let recent = 200
  /// Failed windows and boot decisions kept from before the recent ones, at most.
  public static let earlierLimit = 1000

  public init() {}

  public init(_ all: [DeviceEvent], recent: Int = DeviceEventDigest.recent) {
    let transfer = all.lastIndex { $0.name == "PREPARE" && $0.args["status"] == "success" }
    let cut = max(0, all.count - recent)
    var kept: [DeviceEvent] = []
    for index in 0..<cut {
      let event = all[index]
      let inTransfer = transfer.map { index > $0 } ?? true
      if event.name == "window", inTransfer {
        if event.args["crc"] == "ok" { windowsCheckedEarlier += 1 } else { kept.append(event) }
      } else if event.name == "boot decision" || index == transfer {
        kept.append(event)
      }
    }
    events = kept.suffix(Self.earlierLimit) + all[cut...]
  }
}
