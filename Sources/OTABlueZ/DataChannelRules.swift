import OTASystem
import OTAWire

/// The rules of the device's L2CAP data channel (docs/PROTOCOL.md, "Data over an L2CAP channel"),
/// as pure decisions: who may open it, and which SDUs reach the receiver.
public enum DataChannelRules {
  /// The largest SDU the device takes (its BT_RCVMTU): one chunk of 4096 image bytes and its
  /// 4-byte offset, so that chunks fill whole pages of storage.
  public static let receiveMTU: UInt16 = 4100

  /// The receive buffer of the channel's socket. A kernel before 6.10 gives credits back as SDUs
  /// arrive, whether or not otad keeps up, and resets the channel when an SDU finds the buffer
  /// full; a central keeps at most a window (64 KiB by default, 16 SDUs) unacknowledged, and a
  /// reassembled SDU costs the buffer more than its size. Insurance: in the VM a reader 2 ms slow
  /// per SDU kept up with Linux's default (208 KiB) too.
  public static let receiveBuffer = 4 << 20

  public enum Admission: Equatable, Sendable {
    case accept
    case refuse(String)
  }

  /// A channel opened by `peer`, while `central` is the central connected on GATT (nil: none known
  /// yet) and `open` is the channel already open, if any.
  public static func admit(peer: BluetoothAddress, central: BluetoothAddress?, open: BluetoothAddress?)
    -> Admission
  {
    guard let central else { return .refuse("no central is connected on GATT (read Info first)") }
    guard peer == central else { return .refuse("\(peer) is not the connected central \(central)") }
    if open != nil { return .refuse("a channel is open already (one at a time)") }
    return .accept
  }

  public enum Verdict: Equatable, Sendable {
    /// A chunk: hand it to the receiver (which checks its offset like any data write).
    case chunk
    /// Dropped before the receiver: why, for the log.
    case drop(String)
  }

  /// One SDU of `count` bytes (`count` is the length read, up to one more than `receiveMTU`: more
  /// than the MTU means the SDU was longer than the device takes).
  public static func judge(count: Int, receiveMTU: Int = Int(receiveMTU)) -> Verdict {
    if count <= DataChunk.headerSize {
      return .drop("an SDU of \(count) bytes is no chunk (offset u32 and at least one byte)")
    }
    if count > receiveMTU { return .drop("an SDU longer than the receive MTU \(receiveMTU)") }
    return .chunk
  }

  /// The address in a BlueZ device path (`/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`).
  public static func address(ofDevice path: String) -> BluetoothAddress? {
    guard let last = path.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
    return BluetoothAddress(parsing: last.dropFirst(4).split(separator: "_").joined(separator: ":"))
  }
}
