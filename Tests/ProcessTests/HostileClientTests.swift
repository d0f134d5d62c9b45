import Foundation
import Testing

/// One client must not stop the daemon: otad over the simulated link against a raw client that
/// holds the connection without a word, or floods requests and never reads the answers; a real
/// `otactl push` must still get through, and SIGTERM must still end otad at once.
@Suite(.serialized) struct HostileClientTests {
  static let firmware = testBytes(5000, seed: 1)

  func push(_ bytes: [UInt8], to daemon: Daemon, _ extra: [String] = []) throws -> CommandResult {
    let url = daemon.folder.appendingPathComponent("image.bin")
    try Data(bytes).write(to: url)
    return try runTool(
      "otactl",
      [
        "push", url.path, "--version", "2.0.0", "--device", daemon.socket, "--link",
        "mtu=247,interval=2ms,packets=8",
      ] + extra,
      timeout: 60)
  }

  @Test func aConnectionThatSaysNothingIsDroppedAndAPushGetsThrough() throws {
    // [P-TIME-12] [SEC-LIMIT-4] [SEC-ATK-47]
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

  /// A push with few reconnects allowed (3: they ran out in 0.7 s) still waits out a central that
  /// connected and says nothing: the device drops it at its hello timeout (3 s), and the push
  /// gets in, instead of giving up on a device "not reachable".
  @Test func aPushWithFewReconnectsWaitsOutASilentCentral() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let hog = try LinkClient(path: daemon.socket)
    let second = try LinkClient(path: daemon.socket)
    #expect(second.receive(timeout: 2) == LinkClient.busy, "the silent connection holds the device")

    let image = testBytes(20_000, seed: 6)
    let result = try push(image, to: daemon, ["--max-reconnects", "3", "--no-activate"])
    #expect(result.status == 0, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(!result.errors.contains("not reachable"), "\(result.errors)")
    #expect(hog.receive(timeout: 1) == [], "otad closed the silent connection")
    #expect(daemon.log.contains("sent no hello within 3"), "\(daemon.log)")
    let stored = daemon.slotBytes(daemon.slotB, count: image.count) == image
    #expect(stored, "slot B holds the image")
    #expect(daemon.stop() == 0)
  }

  /// A central that said hello holds the device until it has been idle 30 s, longer than a push
  /// waits for a busy device (10 s, here with no reconnect allowed at all): the push fails saying
  /// the device is busy with another central, exit 9 as for a device that answers PREPARE busy,
  /// not "not reachable … in range", and nothing was sent.
  @Test func aPushThatCannotGetPastAnotherCentralSaysBusy() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let holder = try LinkClient(path: daemon.socket)
    holder.send(LinkClient.hello)
    #expect(holder.receive(timeout: 2).map { $0.count > 0 } == true, "otad welcomed the first central")

    let image = testBytes(20_000, seed: 7)
    let result = try push(image, to: daemon, ["--max-reconnects", "0", "--no-activate"])
    #expect(result.status == 9, "\(result.output)\n\(result.errors)\n\(daemon.log)")
    #expect(result.errors.contains("device busy with another central"), "\(result.errors)")
    #expect(result.errors.contains("try again when the other one is done"), "\(result.errors)")
    #expect(!result.errors.contains("not reachable"), "\(result.errors)")
    // Asked again past the device's hello timeout although no reconnect was allowed: 8 attempts
    // in 11.3 s (0.1, 0.2, 0.4 … 5 s apart) before the push gives up.
    let attempts = result.errors.components(separatedBy: " connection attempts failed").first?
      .split(separator: " ").last.flatMap { Int($0) }
    #expect(attempts.map { $0 >= 7 } == true, "\(result.errors)")
    let stored = daemon.slotBytes(daemon.slotB, count: image.count) == image
    #expect(!stored, "nothing was sent")
    #expect(!daemon.log.contains("PREPARE"), "nothing was sent")
    #expect(daemon.stop() == 0)
  }

  /// `otactl info` (a one-shot command, no reconnects) says busy too, with the same exit status.
  @Test func infoOnADeviceHeldByAnotherCentralSaysBusy() throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let holder = try LinkClient(path: daemon.socket)
    holder.send(LinkClient.hello)
    #expect(holder.receive(timeout: 2).map { $0.count > 0 } == true, "otad welcomed the first central")
    let result = try runTool("otactl", ["info", "--device", daemon.socket], timeout: 30)
    #expect(result.status == 9, "\(result.output)\n\(result.errors)")
    #expect(result.errors.contains("device busy with another central"), "\(result.errors)")
    #expect(!result.errors.contains("Check that the device runs"), "\(result.errors)")
    #expect(daemon.stop() == 0)
  }

  @Test func aClientThatFloodsAndNeverReadsIsDroppedAndAPushGetsThrough() throws {
    // [SEC-LIMIT-4] [SEC-ATK-49]
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
    // [SEC-LIMIT-4] [SEC-ATK-50]
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
