import Foundation
import OTATrace
import Testing

@Suite struct TraceBuilderTests {
  func parse(_ document: String) throws -> [[String: Any]] {
    let object = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any]
    return try #require(object?["traceEvents"] as? [[String: Any]])
  }

  @Test func slicesLeftOpenAreEndedInTheDocumentInnermostFirst() throws {
    var builder = TraceBuilder(pid: 7)
    builder.begin("push", tid: 1, at: 100)
    builder.begin("transfer", tid: 1, at: 150)
    builder.instant("resend", tid: 2, at: 170)
    let events = try parse(builder.document(closingAt: 300))
    let phases = events.map { "\($0["ph"] ?? "")\($0["name"] ?? "")@\($0["ts"] ?? "")" }
    #expect(phases == ["Bpush@100", "Btransfer@150", "iresend@170", "Etransfer@300", "Epush@300"])
    #expect(events.allSatisfy { $0["pid"] as? Int == 7 })
  }

  @Test func anEndWithNothingOpenIsDropped() {
    var builder = TraceBuilder(pid: 1)
    builder.end(tid: 3, at: 10)
    #expect(builder.events.isEmpty)
  }

  @Test func pastTheLimitNothingMoreIsStoredAndBeginsKeepTheirEnds() throws {
    var builder = TraceBuilder(pid: 1, limit: 16)
    builder.begin("push", tid: 1, at: 0)
    for index in 0..<100 { builder.complete("window", tid: 2, from: UInt64(index), to: UInt64(index + 1)) }
    builder.begin("late", tid: 1, at: 200)
    builder.end(tid: 1, at: 210)
    builder.end(tid: 1, at: 220)
    #expect(builder.events.count == 17, "16 kept, and the end of the stored begin")
    #expect(builder.dropped == 86, "84 windows and the late begin")
    let events = try parse(builder.document())
    #expect(
      events.filter { $0["ph"] as? String == "B" }.count == events.filter { $0["ph"] as? String == "E" }.count
    )
    #expect(events.last?["name"] as? String == "push" && events.last?["ts"] as? Int == 220)
  }

  @Test func aCompleteSliceHasItsDurationAndNeverANegativeOne() throws {
    var builder = TraceBuilder(pid: 1)
    builder.complete("window", tid: 2, from: 50, to: 80, args: [TraceArgument("crc", "ok")])
    builder.complete("odd", tid: 2, from: 90, to: 60)
    let events = try parse(builder.document())
    #expect(
      events[0]["dur"] as? Int == 30 && (events[0]["args"] as? [String: Any])?["crc"] as? String == "ok")
    #expect(events[1]["dur"] as? Int == 0)
  }

  @Test func stringsAreEscapedAndNumbersKeepTheirKind() throws {
    var builder = TraceBuilder(pid: 1)
    builder.nameProcess("otad \"lab\"\n\\")
    builder.instant(
      "i", tid: 1, at: 5,
      args: [
        TraceArgument("text", .string("tab\there \u{01}")), TraceArgument("n", .integer(-3)),
        TraceArgument("x", .number(1.5)), TraceArgument("nan", .number(.nan)),
        TraceArgument("b", .bool(true)),
      ])
    let events = try parse(builder.document())
    #expect((events[0]["args"] as? [String: Any])?["name"] as? String == "otad \"lab\"\n\\")
    let args = try #require(events[1]["args"] as? [String: Any])
    #expect(args["text"] as? String == "tab\there \u{01}")
    #expect(args["n"] as? Int == -3 && args["x"] as? Double == 1.5 && args["nan"] is NSNull)
    #expect(args["b"] as? Bool == true)
    #expect(events[1]["s"] as? String == "t", "an instant on its thread's track")
  }

  @Test func aContinuedDocumentKeepsTheEarlierEventsFirst() throws {
    var first = TraceBuilder(pid: 2)
    first.instant("restart", tid: 4, at: 10)
    let earlier = TraceJSON.eventLines(of: first.document())
    #expect(earlier.count == 1)
    var second = TraceBuilder(pid: 2)
    second.instant("boot decision", tid: 4, at: 20)
    let events = try parse(second.document(after: earlier))
    #expect(events.map { $0["name"] as? String } == ["restart", "boot decision"])
    #expect(TraceJSON.eventLines(of: "{\"traceEvents\":[]}").isEmpty, "not ours: a new trace")
    #expect(TraceJSON.eventLines(of: TraceBuilder(pid: 1).document()).isEmpty)
  }
}
