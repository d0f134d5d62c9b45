import Foundation
import Testing

/// One client must not stop the daemon: otad over the simulated link against a raw client that
/// holds the connection without a word, or floods requests and never reads the answers; a real
/// `otactl push` must still get through, and SIGTERM must still end otad at once.
@Suite(.serialized) struct HostileClientTests {
  static let firmware = testBytes(5000, seed: 1)

  func push(_ bytes: [UInt8], to daemon: Daemon) throws -> CommandResult {
    let url = daemon.folder.appendingPathComponent("image.bin")
    try Data(bytes).write(to: url)
    return try runTool(
      "otactl",
      [
        "push", url.path, "--version", "2.0.0", "--device", daemon.socket, "--link",
        "mtu=247,interval=2ms,packets=8",
      ],
      timeout: 60)
  }

  @Test func aConnectionThatSaysNothingIsDroppedAndAPushGetsThrough() throws {
    // [P-TIME-12]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let hog = try LinkClient(path: daemon.socket)
    let second = try LinkClient(path: daemon.socket)
    #expect(second.receive(timeout: 2) == LinkClient.busy, "the silent connection holds the device")

    let image = testBytes(60_000, seed: 4)
    let result = try push(image, to: daemon)
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(hog.receive(timeout: 1) == [], "otad closed the silent connection")
    #expect(daemon.log.contains("sent no hello within 3"), "\(daemon.log)")
    #expect(daemon.slotBytes(daemon.slotB, count: image.count) == image)
    #expect(daemon.stop() == 0)
  }

  @Test func aClientThatFloodsAndNeverReadsIsDroppedAndAPushGetsThrough() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let flooder = Flooder(path: daemon.socket, reconnect: false, duration: 60)
    let started = flooder.wait(upTo: 5) { $0.bytesSent > 0 }
    #expect(started.connections == 1)

    let image = testBytes(60_000, seed: 5)
    let result = try push(image, to: daemon)
    let tally = flooder.finish()
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(tally.drops == 1, "otad dropped the flooder: \(tally)")
    #expect(daemon.log.contains("stopped reading"), "\(daemon.log)")
    #expect(daemon.slotBytes(daemon.slotB, count: image.count) == image)
    #expect(daemon.stop() == 0)
  }

  @Test func sigtermEndsOtadWithinASecondWhileAClientFloods() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let process = try #require(daemon.process)
    let flooder = Flooder(path: daemon.socket, reconnect: true, duration: 60)
    // Flooding for real: more than the socket buffers on both sides hold, dropped and back again.
    let before = flooder.wait(upTo: 10) { $0.bytesSent > 1_000_000 && $0.drops >= 2 }
    #expect(before.bytesSent > 1_000_000 && before.drops >= 2, "\(before)")

    let signalled = Date()
    kill(process.processIdentifier, SIGTERM)
    while process.isRunning, Date().timeIntervalSince(signalled) < 1 { usleep(5_000) }
    let took = Date().timeIntervalSince(signalled)
    let ended = !process.isRunning
    #expect(ended, "otad still ran 1 s after SIGTERM\n\(daemon.log)")
    let tally = flooder.finish()
    if ended {
      process.waitUntilExit()
      #expect(process.terminationStatus == 0, "SIGTERM stops otad cleanly (took \(took) s)\n\(daemon.log)")
      #expect(tally.connections > 1)
    } else {
      daemon.killHard()
    }
  }
}
