import OTACentral
import OTASender
import OTATrace
import Testing

@Suite struct PushTraceTests {
  func argument(_ event: TraceEvent, _ key: String) -> TraceValue? {
    event.args.first { $0.key == key }?.value
  }

  @Test func windowsPhasesAndAResumeBecomeSlicesAndInstantsThatNest() {
    var trace = PushTrace(image: "v2.bin", version: "2.0.0", size: 24_576, at: 0)
    var report = SenderReport()
    trace.record(SenderProgress(phase: .connecting, committed: 0, total: 24_576), report, at: 10)
    trace.record(SenderProgress(phase: .preparing, committed: 0, total: 24_576), report, at: 20)
    trace.record(SenderProgress(phase: .transferring, committed: 0, total: 24_576), report, at: 30)
    trace.record(SenderProgress(phase: .transferring, committed: 8192, total: 24_576), report, at: 40)
    report.windowFailures = 1
    report.chunksResent = 3
    trace.record(SenderProgress(phase: .transferring, committed: 16_384, total: 24_576), report, at: 60)
    trace.record(SenderProgress(phase: .connecting, committed: 16_384, total: 24_576), report, at: 70)
    report.reconnects = 1
    report.resumedFrom = [16_384]
    trace.record(SenderProgress(phase: .transferring, committed: 16_384, total: 24_576), report, at: 80)
    trace.record(SenderProgress(phase: .transferring, committed: 24_576, total: 24_576), report, at: 90)
    trace.record(SenderProgress(phase: .validating, committed: 24_576, total: 24_576), report, at: 95)
    trace.finish(.succeeded(report), at: 100)

    let events = trace.builder.events
    let windows = events.filter { $0.name == "window" }
    #expect(windows.map { argument($0, "offset") } == [.integer(0), .integer(8192), .integer(16_384)])
    #expect(
      windows.map { argument($0, "crc") } == [
        .string("ok"), .string("ok after 1 failed check(s)"), .string("ok"),
      ])
    #expect(windows.map(\.timestamp) == [30, 40, 80], "each from the last commit, or the resume")
    let phases = events.filter { $0.phase == .complete && $0.tid == PushTrace.Track.push.rawValue }.map(
      \.name)
    #expect(phases == ["connect", "PREPARE", "transfer", "connect", "transfer", "VALIDATE"])
    #expect(events.contains { $0.name == "resume" && argument($0, "offset") == .integer(16_384) })
    #expect(events.contains { $0.name == "resend" && argument($0, "chunks") == .integer(3) })
    #expect(events.contains { $0.name == "reconnect" })
    #expect(events.filter { $0.phase == .begin }.count == 1 && events.filter { $0.phase == .end }.count == 1)
    #expect(events.last?.phase == .end && events.last?.timestamp == 100)
  }
}
