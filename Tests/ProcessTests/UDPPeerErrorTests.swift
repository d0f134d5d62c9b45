import Foundation
import Glibc
import Testing

/// Nothing a UDP peer sends ends otad: a datagram from a source port no answer can reach (port 0,
/// only a raw socket can send from it), of every size that takes another path through the server.
/// Needs root for the raw socket (CI runs as root); skipped otherwise.
@Suite(.serialized) struct UDPPeerErrorTests {
  static let isRoot = geteuid() == 0

  @Test(.enabled(if: isRoot, "a raw socket needs root"))
  func datagramsFromPortZeroLeaveOtadServing() throws {
    // [SEC-LIMIT-5] [SEC-ATK-33]
    let address = "127.0.0.41"
    let daemon = try Daemon(capacity: "64KiB", firmware: testBytes(3000, seed: 41))
    try daemon.start(extra: ["--smp-udp", "\(address):1337", "--factory-version", "1.0.0"])
    let raw = try RawUDPSender()
    // An echo request padded to each size: under buf_size (answered), over it (refused as too
    // large: seen, 3,012 bytes ended otad with "sendto ... Invalid argument"), and a runt.
    for size in [3012, 2048, 100, 8, 3] {
      raw.send(Self.echo(size: size), to: address, port: 1337, fromPort: 0)
    }
    usleep(300_000)
    let client = try UDPClient(address: address)
    #expect(try client.ask("0000000000000506") != nil, "otad still answers: \(daemon.log)")
    #expect(daemon.log.contains("a peer's loss; otad goes on"), "the first failed answer is logged")
    #expect(daemon.stop() == 0, "\(daemon.log)")
  }

  /// An SMP echo write whose header announces the rest of `size` bytes (a CBOR map of one byte
  /// string); fewer than a header's 8 bytes for a runt.
  static func echo(size: Int) -> [UInt8] {
    guard size > 8 else { return [UInt8](repeating: 0x02, count: size) }
    let body = [0xA0] + [UInt8](repeating: 0, count: size - 9)
    let length = UInt16(body.count)
    return [0x02, 0x00, UInt8(length >> 8), UInt8(length & 0xFF), 0x00, 0x00, 0x01, 0x00] + body
  }
}

/// Sends UDP datagrams with a source port of its choosing, through a raw socket (root only): the
/// kernel adds the IP header, this writes the UDP header (checksum 0: none, as IPv4 allows).
final class RawUDPSender {
  private let descriptor: Int32

  init() throws {
    descriptor = socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_UDP))
    guard descriptor >= 0 else { throw DaemonError("raw socket: errno \(errno)") }
  }

  deinit { close(descriptor) }

  func send(_ payload: [UInt8], to host: String, port: UInt16, fromPort: UInt16) {
    let length = UInt16(8 + payload.count)
    let header: [UInt8] = [
      UInt8(fromPort >> 8), UInt8(fromPort & 0xFF), UInt8(port >> 8), UInt8(port & 0xFF),
      UInt8(length >> 8), UInt8(length & 0xFF), 0, 0,
    ]
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    _ = inet_pton(AF_INET, host, &address.sin_addr)
    let packet = header + payload
    _ = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        sendto(descriptor, packet, packet.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }
}
