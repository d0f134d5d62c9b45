import Logging
import OTASystem
import OTASystemTesting
import OTATestSupport
import Testing

@testable import OTABlueZ

/// The IO shell around the book: what it reads from its socket, and what it says when the kernel
/// will not give it one.
@Suite struct LinkFactsMonitorTests {
  typealias Events = HCILinkEventTests

  @Test func withoutCAPNetRawItSaysSoOnceAndReportsNothing() {
    let lines = CapturedLog()
    let trace = SystemCallTrace(rules: [.init(.socket, path: "hci0", .fail(.notPermitted))])
    let monitor = trace.run { LinkFactsMonitor(adapter: "hci0", logger: lines.logger) }
    #expect(monitor.descriptors.isEmpty)
    #expect(monitor.service(readable: [0, 1, 2]).isEmpty)
    #expect(
      lines.messages == [
        "warning link parameters unknown: Operation not permitted; run as root or give CAP_NET_RAW"
      ])
  }

  @Test func anAdapterThatIsNotHCIIsNamedInTheLine() {
    let lines = CapturedLog()
    let monitor = LinkFactsMonitor(adapter: "bt0", logger: lines.logger)
    #expect(monitor.descriptors.isEmpty)
    #expect(lines.messages.count == 1 && lines.messages[0].hasPrefix("warning link parameters unknown: "))
  }

  @Test func itFoldsWhatItReadsAndSkipsWhatItCannotParse() throws {
    let (hci, controller) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    let monitor = LinkFactsMonitor(socket: hci, logger: Logger(label: "test"))
    for packet in [Events.connectionComplete, [0x04, 0x3E], Events.dataLengthChange, Events.disconnection] {
      _ = try packet.withUnsafeBytes { bytes throws(SystemError) in try controller.send(bytes, waiting: false)
      }
    }
    let changes = monitor.service(readable: [hci.rawValue])
    #expect(changes.count == 3)
    guard case .closed(let facts, let reason) = changes.last else {
      Issue.record("\(changes)")
      return
    }
    #expect(reason == 0x13 && facts.dataLength?.maxTxOctets == 251 && facts.peer == Events.peer)
    #expect(monitor.service(readable: [hci.rawValue]).isEmpty, "nothing more waits")
    #expect(monitor.descriptors == [hci.rawValue])
  }

  @Test func aSocketThatFailsIsDroppedWithALine() throws {
    let lines = CapturedLog()
    let (hci, _) = try FileDescriptor.unixSocketPair(.sequencedPacket, nonBlocking: true)
    let monitor = LinkFactsMonitor(socket: hci, logger: lines.logger)
    let trace = SystemCallTrace(rules: [.init(.recv, .fail(.io))])
    let changes = trace.run { monitor.service(readable: [hci.rawValue]) }
    #expect(changes.isEmpty && monitor.descriptors.isEmpty)
    #expect(lines.messages.count == 1 && lines.messages[0].contains("no more link facts"))
  }
}
