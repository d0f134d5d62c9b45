import OTADaemon
import OTATrace
import Testing

@Suite struct DeviceTraceTests {
  func named(_ trace: DeviceTrace, _ name: String) -> [TraceEvent] {
    trace.builder.events.filter { $0.name == name }
  }

  func argument(_ event: TraceEvent, _ key: String) -> TraceValue? {
    event.args.first { $0.key == key }?.value
  }

  @Test func aTransferCutAndResumedGivesPhasesAndOneSlicePerWindowWithItsResult() {
    var trace = DeviceTrace()
    trace.record(.connected(mtu: 247), at: 1_000)
    trace.record(.request("PREPARE", offset: nil, length: nil), at: 1_100)
    trace.record(.response("PREPARE", status: "success", offset: nil, reason: nil), at: 1_300)
    trace.record(.request("WINDOW", offset: 0, length: 4096), at: 2_000)
    trace.record(.response("WINDOW", status: "success", offset: 4096, reason: nil), at: 2_100)
    trace.record(.request("WINDOW", offset: 4096, length: 4096), at: 3_000)
    trace.record(.response("WINDOW", status: "CRC mismatch", offset: 4096, reason: nil), at: 3_100)
    trace.record(.disconnected(committed: 4096), at: 3_500)
    trace.record(.connected(mtu: 247), at: 4_000)
    trace.record(.request("STATUS", offset: nil, length: nil), at: 4_100)
    trace.record(.response("STATUS", status: "success", offset: 4096, reason: nil), at: 4_150)
    trace.record(.request("WINDOW", offset: 4096, length: 4096), at: 5_000)
    trace.record(.response("WINDOW", status: "success", offset: 8192, reason: nil), at: 5_100)
    trace.record(.request("VALIDATE", offset: nil, length: nil), at: 5_200)
    trace.record(
      .response("VALIDATE", status: "signature invalid", offset: nil, reason: "signature invalid"), at: 5_900)

    let windows = named(trace, "window")
    #expect(windows.map { argument($0, "crc") } == [.string("ok"), .string("CRC mismatch"), .string("ok")])
    #expect(windows.map { argument($0, "offset") } == [.integer(0), .integer(4096), .integer(4096)])
    #expect(
      windows.map(\.timestamp) == [1_300, 2_100, 4_150], "from the last answer (STATUS's, at a resume)")
    #expect(windows.allSatisfy { $0.phase == .complete })
    let transfers = named(trace, "transfer")
    #expect(transfers.count == 2, "cut at the drop, resumed after it")
    #expect(transfers.map { argument($0, "from") } == [.integer(0), .integer(4096)])
    #expect(transfers.map { argument($0, "ended") } == [.string("cut off"), .string("complete")])
    #expect(named(trace, "PREPARE").first?.duration == 200)
    let validate = named(trace, "VALIDATE").first
    #expect(validate.flatMap { argument($0, "reason") } == .string("signature invalid"))
    #expect(named(trace, "resend asked").count == 1)
    #expect(named(trace, "disconnected").first.flatMap { argument($0, "committed") } == .integer(4096))
  }

  @Test func bootDecisionsAndRestartsAreInstantsOnTheBootTrack() {
    var trace = DeviceTrace()
    trace.record(
      .bootDecision(
        row: "trial out of boots", run: "B", version: "2.0.0", restart: false, rolledBack: "3.0.0 x"),
      at: 10)
    trace.record(.restart(reason: "ACTIVATE"), at: 20)
    let boot = trace.builder.events.filter {
      $0.tid == DeviceTrace.Track.boot.rawValue && $0.phase == .instant
    }
    #expect(boot.map(\.name) == ["boot decision", "restart"])
    #expect(argument(boot[0], "rolledBack") == .string("3.0.0 x"))
    #expect(
      !trace.builder.events.contains { $0.phase == .begin || $0.phase == .end }, "nothing left open at a kill"
    )
  }

  @Test func windowsAreWrittenAtMostEveryQuarterSecondAndAtOnceWhenTheClockStepsBack() {
    let last: UInt64 = 10_000_000
    #expect(!DeviceTraceWritePacing.windowWriteDue(now: last + 249_999, lastWrite: last, events: 10))
    #expect(DeviceTraceWritePacing.windowWriteDue(now: last + 250_000, lastWrite: last, events: 10))
    // A large trace waits longer, never more than two seconds.
    #expect(!DeviceTraceWritePacing.windowWriteDue(now: last + 1_999_999, lastWrite: last, events: 50_000))
    #expect(DeviceTraceWritePacing.windowWriteDue(now: last + 2_000_000, lastWrite: last, events: 50_000))
    // The wall clock stepped back (NTP on a board without a clock): written at once, no overflow.
    #expect(DeviceTraceWritePacing.windowWriteDue(now: last - 1, lastWrite: last, events: 10))
    #expect(DeviceTraceWritePacing.windowWriteDue(now: 0, lastWrite: UInt64.max, events: 10))
  }
}
