import OTASMP
import OTASMPServer
import Testing

/// SMP over Bluetooth's transport logic: requests put together per central from writes cut
/// anywhere, bounded in size, count and time; answers cut at MTU − 3.
@Suite struct SMPBluetoothSessionsTests {
  /// An echo request (SMP v2) whose text is `text`.
  static func echo(_ text: String, sequence: UInt8) -> [UInt8] {
    let body: [UInt8] = [0xA1, 0x61, 0x64, 0x60 + UInt8(text.utf8.count)] + Array(text.utf8)
    return SMPHeader(
      operation: .write, version: 1, length: UInt16(body.count), group: 0, sequence: sequence, command: 0
    ).encoded + body
  }

  @Test func aRequestCutAcrossWritesIsWholeAfterItsLastPiece() {
    // [S-BLE-4] [SEC-SMP-9]
    var sessions = SMPBluetoothSessions(maxMessage: 2048)
    let request = Self.echo("hello, device", sequence: 1)
    #expect(sessions.receive(Array(request[0..<5]), from: "a", mtu: 23, now: .zero) == [])
    #expect(sessions.receive(Array(request[5..<12]), from: "a", mtu: 23, now: .seconds(1)) == [])
    #expect(sessions.pendingCentrals == 1)
    #expect(
      sessions.receive(Array(request[12...]), from: "a", mtu: 23, now: .seconds(2)) == [.message(request)])
    #expect(sessions.pendingCentrals == 0)
    #expect(sessions.nextDeadline == nil)
  }

  @Test func twoCentralsInterleavedAreKeptApart() {
    // [S-BLE-4] [SEC-SMP-9]
    var sessions = SMPBluetoothSessions(maxMessage: 2048)
    let first = Self.echo("first", sequence: 1)
    let second = Self.echo("second central", sequence: 7)
    #expect(sessions.receive(Array(first[0..<9]), from: "a", mtu: 23, now: .zero) == [])
    #expect(sessions.receive(Array(second[0..<3]), from: "b", mtu: 247, now: .zero) == [])
    #expect(sessions.receive(Array(second[3...]), from: "b", mtu: 247, now: .zero) == [.message(second)])
    #expect(sessions.receive(Array(first[9...]), from: "a", mtu: 23, now: .zero) == [.message(first)])
  }

  @Test func twoRequestsInOneWriteAreBothAnswered() {
    // [S-BLE-4]
    var sessions = SMPBluetoothSessions(maxMessage: 2048)
    let first = Self.echo("x", sequence: 1)
    let second = Self.echo("y", sequence: 2)
    #expect(
      sessions.receive(first + second, from: "a", mtu: 100, now: .zero) == [
        .message(first), .message(second),
      ])
  }

  @Test func aHeaderAnnouncingMoreThanTheBufferIsRefusedAtOnceWithItsHeader() {
    // [S-BLE-5] [SEC-SMP-9]
    var sessions = SMPBluetoothSessions(maxMessage: 2048)
    let header = SMPHeader(operation: .write, version: 1, length: 2041, group: 1, sequence: 3, command: 1)
      .encoded
    #expect(sessions.receive(header, from: "a", mtu: 23, now: .zero) == [.tooLarge(header: header)])
    #expect(sessions.pendingCentrals == 0, "nothing is held for a message that cannot be taken")
    let fits = SMPHeader(operation: .write, version: 1, length: 2040, group: 1, sequence: 3, command: 1)
      .encoded
    #expect(sessions.receive(fits, from: "a", mtu: 23, now: .zero) == [])
  }

  @Test func aMessageThatNeverCompletesIsGivenUpAfterTheTimeoutWithItsBytes() {
    // [S-BLE-5] [SEC-SMP-10]
    var sessions = SMPBluetoothSessions(maxMessage: 2048, timeout: .seconds(10))
    let request = Self.echo("never finished", sequence: 4)
    _ = sessions.receive(Array(request[0..<10]), from: "a", mtu: 185, now: .seconds(1))
    _ = sessions.receive(Array(request[10..<12]), from: "a", mtu: 185, now: .seconds(3))
    #expect(sessions.nextDeadline == .seconds(13), "the clock restarts at each write")
    #expect(sessions.expire(now: .seconds(12)).isEmpty)
    let expired = sessions.expire(now: .seconds(13))
    #expect(expired.count == 1)
    #expect(expired.first?.central == "a" && expired.first?.mtu == 185)
    #expect(expired.first?.outcome == .abandoned(Array(request[0..<12])))
    #expect(sessions.pendingCentrals == 0 && sessions.nextDeadline == nil)
  }

  @Test func aCentralThatDisconnectsLeavesNothingBehind() {
    // [S-BLE-5] [SEC-SMP-9]
    var sessions = SMPBluetoothSessions(maxMessage: 2048)
    let request = Self.echo("gone", sequence: 1)
    _ = sessions.receive(Array(request[0..<6]), from: "a", mtu: 23, now: .zero)
    sessions.forget("a")
    #expect(sessions.pendingCentrals == 0)
    #expect(sessions.expire(now: .seconds(100)).isEmpty)
    // What it sends on a new connection starts a new message.
    #expect(sessions.receive(request, from: "a", mtu: 23, now: .zero) == [.message(request)])
  }

  @Test func atMostEightCentralsHoldPartialMessagesTheQuietestIsPushedOut() {
    // [S-BLE-5] [SEC-SMP-10]
    var sessions = SMPBluetoothSessions(maxMessage: 2048)
    let request = Self.echo("partial", sequence: 1)
    for index in 0..<SMPBluetoothSessions.maxCentrals {
      _ = sessions.receive(Array(request[0..<4]), from: "c\(index)", mtu: 23, now: .seconds(Int64(index)))
    }
    #expect(sessions.pendingCentrals == SMPBluetoothSessions.maxCentrals)
    _ = sessions.receive(Array(request[0..<4]), from: "new", mtu: 23, now: .seconds(100))
    #expect(sessions.pendingCentrals == SMPBluetoothSessions.maxCentrals)
    // c0 wrote longest ago: its partial message is gone, so its rest is a runt, not a message.
    #expect(
      sessions.receive(Array(request[4...]), from: "c1", mtu: 23, now: .seconds(100)) == [.message(request)])
    #expect(
      sessions.receive(Array(request[4...]), from: "c0", mtu: 23, now: .seconds(100)) != [.message(request)])
  }

  @Test func answersAreCutIntoNotificationsOfAtMostMTUMinusThree() {
    // [S-BLE-6] [SEC-SMP-9]
    let answer = (0..<100).map { UInt8($0) }
    let pieces = SMPBluetoothSessions.notifications(answer, mtu: 23)
    #expect(pieces.map(\.count) == [20, 20, 20, 20, 20])
    #expect(pieces.flatMap { $0 } == answer)
    #expect(SMPBluetoothSessions.notifications(answer, mtu: 247) == [answer])
    #expect(SMPBluetoothSessions.notifications(Array(answer[0..<41]), mtu: 23).map(\.count) == [20, 20, 1])
    let long = [UInt8](repeating: 7, count: 1500)
    #expect(
      SMPBluetoothSessions.notifications(long, mtu: 517).map(\.count) == [512, 512, 476],
      "never more than the largest attribute value")
    #expect(SMPBluetoothSessions.notifications([], mtu: 23).isEmpty)
  }
}
