import OTADaemon
import OTAWire
import Testing

/// The session report an app's team reads (`otad run --sessions`, docs/APP-TESTING.md): what the
/// central sent and when, summed up per run of data writes, the faults that fired, how it ended,
/// and how the next session took up where this one left off.
@Suite struct SessionReportTests {
  static let start: UInt64 = 1_795_816_745_000_000  // 2026-11-27 21:59:05 UTC

  func ms(_ milliseconds: UInt64) -> UInt64 { Self.start + milliseconds * 1000 }

  @Test func anOTASessionIsToldLineByLineAndSummedUp() throws {
    var recorder = SessionRecorder()
    recorder.record(.serving(slot: "A", version: "1.0.0", onTrial: false, committed: 0), at: ms(0))
    recorder.record(.connected(mtu: 247), at: ms(0))
    recorder.record(.request("PREPARE", offset: nil, length: 150_000), at: ms(5))
    recorder.record(.response("PREPARE", status: "success", offset: nil, reason: nil), at: ms(7))
    for (index, offset) in [0, 240, 720, 480].enumerated() {
      recorder.record(
        .dataWrite(offset: UInt32(offset), bytes: 244, fate: index == 2 ? .lostByFault : .taken), at: ms(8))
    }
    recorder.record(.dataWrite(offset: 960, bytes: 100, fate: .corruptedByFault), at: ms(9))
    recorder.record(.request("WINDOW", offset: 0, length: 1060), at: ms(10))
    recorder.record(.response("WINDOW", status: "CRC mismatch", offset: 0, reason: nil), at: ms(12))
    recorder.record(.fault("fault 1 fired (1 of 1): drop-link after=37% times=1"), at: ms(20))
    #expect(recorder.takeEnded().isEmpty, "still connected")
    recorder.record(.disconnected(committed: 0), at: ms(20))
    let ended = recorder.takeEnded()
    try #require(ended.count == 1)
    #expect(
      ended[0].text == """
        session 1: OTA central, from 2026-11-27 21:59:05.000 UTC for 20 ms
          +0 ms     connected, ATT MTU 247
          +5 ms     PREPARE, 150000 bytes
          +7 ms     PREPARE answered success
          +8 ms     data: 5 writes of 100 to 244 B (1076 B), offsets 0 to 960, 1 below the one before, 1 lost by a fault, 1 corrupted by a fault
          +10 ms    WINDOW at 0, 1060 bytes
          +12 ms    WINDOW answered CRC mismatch, committed 0
          +20 ms    fault 1 fired (1 of 1): drop-link after=37% times=1
          +20 ms    the central disconnected, 0 bytes committed
        summary:
          sent from the image's start
          committed 0 bytes when it ended
          faults fired: 1
            fault 1 fired (1 of 1): drop-link after=37% times=1
          ended: the central disconnected, 0 bytes committed

        """)
    #expect(recorder.takeEnded().isEmpty, "handed out once")
    let trace = ended[0].trace.document()
    #expect(trace.contains("\"name\":\"fault\"") && trace.contains("\"name\":\"PREPARE\""), "\(trace)")
  }

  @Test func aHeldActivationIsInTheSessionOfTheCentralThatAskedForIt() throws {
    var recorder = SessionRecorder()
    recorder.record(.connected(mtu: 247), at: ms(0))
    recorder.record(.request("ACTIVATE", offset: nil, length: nil), at: ms(5))
    recorder.record(.response("ACTIVATE", status: "deferred", offset: nil, reason: nil), at: ms(6))
    recorder.record(
      .activation("ACTIVATE deferred (an update lock): printer holds an update lock: printing job 17"),
      at: ms(6))
    recorder.record(.disconnected(committed: 0), at: ms(9))
    let text = try #require(recorder.takeEnded().first).text
    #expect(
      text.contains(
        "+6 ms     ACTIVATE deferred (an update lock): printer holds an update lock: printing job 17"),
      "\(text)")
    // With no session open (the device acting on its own later), nothing is recorded and nothing traps.
    recorder.record(.activation("the kept activation of 2.0.0+0 was carried out"), at: ms(30_000))
    #expect(recorder.takeEnded().isEmpty)
  }

  @Test func theNextSessionSaysWhenTheCentralCameBackAndWhereItResumed() throws {
    var recorder = SessionRecorder()
    recorder.record(.connected(mtu: 185), at: ms(0))
    recorder.record(.response("WINDOW", status: "success", offset: 65536, reason: nil), at: ms(100))
    recorder.record(.disconnected(committed: 65536), at: ms(200))
    recorder.record(.connected(mtu: 185), at: ms(1700))
    recorder.record(.request("WINDOW", offset: 65536, length: 32768), at: ms(1710))
    recorder.record(.response("WINDOW", status: "success", offset: 98304, reason: nil), at: ms(1750))
    recorder.record(.restart(reason: "ACTIVATE"), at: ms(1800))
    let ended = recorder.takeEnded()
    try #require(ended.count == 2)
    #expect(ended[1].number == 2)
    #expect(
      ended[1].text.contains(
        "+0 ms     the central came back 1500 ms after the last session ended (65536 bytes committed then)"),
      "\(ended[1].text)")
    #expect(ended[1].text.contains("  resumed at 65536 (65536 committed when it connected)\n"))
    #expect(ended[1].text.contains("  committed 98304 bytes when it ended\n"))
    #expect(ended[1].text.contains("  ended: the device restarted (ACTIVATE)\n"))
  }

  @Test func smpClientsHaveSessionsOfTheirOwnEndedByGoingOrSilence() throws {
    var recorder = SessionRecorder()
    recorder.record(.smpRequest(client: "a", command: "smp-upload (write)", offset: 0, bytes: 400), at: ms(0))
    recorder.record(.fault("fault 2 fired (1 of 1): lose-chunk times=1"), at: ms(0))
    recorder.record(
      .smpRequest(client: "b", command: "smp-echo (write)", offset: nil, bytes: nil), at: ms(10))
    recorder.record(.smpAnswer(client: "b", rc: nil), at: ms(11))
    recorder.record(
      .smpRequest(client: "a", command: "smp-upload (write)", offset: 0, bytes: 400), at: ms(2000))
    recorder.record(.smpAnswer(client: "a", rc: 10), at: ms(2001))
    recorder.record(.smpClientGone(client: "a"), at: ms(3000))
    var ended = recorder.takeEnded()
    try #require(ended.count == 1)
    #expect(ended[0].central == "SMP client a")
    #expect(
      ended[0].faults == ["fault 2 fired (1 of 1): lose-chunk times=1"], "the fault went to a's session")
    #expect(ended[0].text.contains("SMP smp-upload (write) at 0, 400 bytes"))
    #expect(ended[0].text.contains("SMP answered rc 10"))
    #expect(ended[0].text.contains("ended: the SMP client went away"))
    // b says nothing for 30 s: its session ends at its last word plus 30 s.
    recorder.record(.connected(mtu: 23), at: ms(40_000))
    ended = recorder.takeEnded()
    try #require(ended.count == 1)
    #expect(ended[0].central == "SMP client b" && ended[0].end == ms(30_011))
    #expect(ended[0].text.contains("ended: the SMP client was quiet for 30 s"))
    #expect(recorder.open.map(\.central) == ["OTA central"])
    recorder.record(.stopped(signal: 15), at: ms(41_000))
    #expect(recorder.takeEnded().map(\.ending) == ["otad stopped (signal 15)"])
    #expect(recorder.open.isEmpty)
  }

  @Test func aLongSessionKeepsItsFirstLinesAndCountsTheRest() throws {
    var recorder = SessionRecorder()
    recorder.record(.connected(mtu: 247), at: ms(0))
    for index in 0..<(SessionRecord.lineLimit + 10) {
      recorder.record(.request("STATUS", offset: nil, length: nil), at: ms(UInt64(index)))
    }
    recorder.record(.disconnected(committed: 0), at: ms(9000))
    let session = try #require(recorder.takeEnded().first)
    #expect(session.lines.count == SessionRecord.lineLimit)
    #expect(session.omitted == 12, "the 11 requests past the limit and the disconnection's line")
    #expect(session.text.contains("(12 more lines left out)"))
  }

  @Test func fileNamesSortByTheRunsStartAndTheSessionsNumber() {
    var recorder = SessionRecorder()
    recorder.record(.connected(mtu: 23), at: ms(0))
    recorder.record(.disconnected(committed: 0), at: ms(1))
    let session = recorder.takeEnded()[0]
    #expect(session.fileName(runStart: Self.start + 7000) == "session-20261127-215905.007-000001")
    #expect(session.fileName(runStart: 951_782_400_000_000) == "session-20000229-000000.000-000001")
    #expect(session.fileName(runStart: 0) == "session-19700101-000000.000-000001")
  }
}
