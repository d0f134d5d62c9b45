import Logging
import OTASystem

/// The IO shell around `LinkFactsBook`: a raw HCI socket on one adapter, read without blocking in
/// the owner's poll loop. It needs CAP_NET_RAW; without it (or without the adapter) it says so
/// once and reports nothing: no link facts never fail a push or stop otad.
final class LinkFactsMonitor {
  /// The most events read in one turn of the loop (a scan's advertising reports pass the filter).
  static let eventsPerTurn = 64

  private var socket: FileDescriptor?
  private(set) var book = LinkFactsBook()
  private let logger: Logger

  /// Opens the socket on `adapter` ("hci0").
  init(adapter: String, logger: Logger) {
    self.logger = logger
    do throws(SystemError) {
      guard let device = Self.deviceNumber(adapter) else {
        throw SystemError(operation: "adapter name", path: adapter, errno: .invalidArgument)
      }
      socket = try FileDescriptor.hciEventSocket(
        device: device, events: [HCIEventCode.leMeta, HCIEventCode.disconnectionComplete])
    } catch {
      let advice =
        error.errno == .notPermitted || error.errno == .permissionDenied
        ? "; run as root or give CAP_NET_RAW" : " (\(error.operation) \(error.path))"
      logger.warning("link parameters unknown: \(error.errno.description)\(advice)")
    }
  }

  /// A monitor reading a socket set up elsewhere (tests: a Unix packet socket stands in for the
  /// kernel's HCI socket).
  init(socket: FileDescriptor, logger: Logger) {
    self.socket = socket
    self.logger = logger
  }

  /// "hci0" -> 0; nil for a name that is not hciN.
  static func deviceNumber(_ adapter: String) -> UInt16? {
    guard adapter.hasPrefix("hci") else { return nil }
    return UInt16(adapter.dropFirst(3))
  }

  var descriptors: [Int32] { socket.map { [$0.rawValue] } ?? [] }

  /// Reads the events waiting and folds them into the book; what changed, in order.
  func service(readable: Set<Int32>) -> [LinkFactsBook.Change] {
    guard let socket, readable.contains(socket.rawValue) else { return [] }
    var changes: [LinkFactsBook.Change] = []
    // An event is at most 2 + 1 + 255 bytes after its type byte.
    var buffer = [UInt8](repeating: 0, count: 260)
    for _ in 0..<Self.eventsPerTurn {
      let received = socket.receiveNow(into: &buffer)
      switch received {
      case .success(let count?) where count > 0:
        if let event = HCILinkEvent(packet: Array(buffer[0..<count])), let change = book.fold(event) {
          changes.append(change)
        }
      case .success:
        return changes
      case .failure(let error):
        logger.warning("link parameters: the HCI socket failed, no more link facts: \(error)")
        try? socket.close()
        self.socket = nil
        return changes
      }
    }
    return changes
  }

  func close() {
    try? socket?.close()
    socket = nil
  }
}
