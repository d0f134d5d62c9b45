// A raw HCI socket that reads the controller's events about links (AF_BLUETOOTH, SOCK_RAW,
// BTPROTO_HCI, bound to one adapter's raw channel). Linux has no call that reads a connection's
// interval or data length: the controller reports them only in events, and a raw socket gets a
// copy of every event the kernel receives. Every call goes through the SystemCalls seam.
import CBluetooth
import Glibc

/// The HCI events an `hciEventSocket` lets through: the event codes its filter sets.
public enum HCIEventCode {
  /// Disconnection Complete.
  public static let disconnectionComplete: UInt8 = 0x05
  /// LE Meta: every LE subevent (connection complete, updates, data length, PHY).
  public static let leMeta: UInt8 = 0x3E
  /// The packet type the kernel puts before each event on a raw socket (HCI_EVENT_PKT).
  public static let eventPacket: UInt8 = 0x04
}

extension FileDescriptor {
  /// A non-blocking raw HCI socket on adapter `device` (0 for hci0) that receives only event
  /// packets of the codes in `events` (each packet: the type byte 0x04, the event code, the
  /// parameter length, the parameters).
  ///
  /// The kernel narrows the filter of a socket without CAP_NET_RAW to a few safe events, silently:
  /// the filter is read back, and a missing event code fails with EPERM rather than leaving a
  /// socket that would never report a link.
  public static func hciEventSocket(device: UInt16, events: [UInt8]) throws(SystemError) -> FileDescriptor {
    let path = "hci\(device)"
    let type = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
    let created = SystemCalls.perform(.socket, path: path) { _ in
      Int(Glibc.socket(AF_BLUETOOTH, type, BTPROTO_HCI))
    }
    let socket: FileDescriptor
    switch created {
    case .success(let raw): socket = FileDescriptor(taking: Int32(raw), path: path)
    case .failure(let code): throw SystemError(operation: "socket", path: path, errno: code)
    }
    do {
      try socket.bindHCI(device: device)
      try socket.setHCIEventFilter(events)
    } catch {
      try? socket.close()
      throw error
    }
    return socket
  }

  private func bindHCI(device: UInt16) throws(SystemError) {
    var address = sockaddr_hci(
      hci_family: sa_family_t(AF_BLUETOOTH), hci_dev: device, hci_channel: UInt16(HCI_CHANNEL_RAW))
    let failure = SystemCalls.check(.bind, path: path, descriptor: rawValue) {
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(rawValue, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
        }
      }
    }
    if let failure { throw SystemError(operation: "bind", path: path, errno: failure) }
  }

  private func setHCIEventFilter(_ events: [UInt8]) throws(SystemError) {
    var filter = hci_filter()
    filter.type_mask = 1 << UInt32(HCIEventCode.eventPacket)
    for code in events {
      if code < 32 {
        filter.event_mask.0 |= 1 << UInt32(code)
      } else if code < 64 {
        filter.event_mask.1 |= 1 << UInt32(code - 32)
      }
    }
    let wanted = filter
    let setFailure = SystemCalls.check(.setsockopt, path: "HCI_FILTER", descriptor: rawValue) {
      setsockopt(rawValue, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size))
    }
    if let setFailure { throw SystemError(operation: "setsockopt HCI_FILTER", path: path, errno: setFailure) }
    var granted = hci_filter()
    var length = socklen_t(MemoryLayout<hci_filter>.size)
    let getFailure = SystemCalls.check(.getsockopt, path: "HCI_FILTER", descriptor: rawValue) {
      getsockopt(rawValue, SOL_HCI, HCI_FILTER, &granted, &length)
    }
    if let getFailure { throw SystemError(operation: "getsockopt HCI_FILTER", path: path, errno: getFailure) }
    guard granted.event_mask.0 & wanted.event_mask.0 == wanted.event_mask.0,
      granted.event_mask.1 & wanted.event_mask.1 == wanted.event_mask.1
    else {
      throw SystemError(
        operation: "HCI_FILTER (events the kernel keeps from a socket without CAP_NET_RAW)",
        path: path, errno: .notPermitted)
    }
  }
}
