import OTAFaults
import OTAWire
import Testing

/// When a fault is due and how often it fires, as the daemon asks the book at each moment of an
/// update; and the book kept between restarts.
@Suite struct FaultBookTests {
  static func data(_ end: UInt64, of size: UInt64? = 1000) -> FaultBook.Moment {
    .data(FaultBook.Progress(end: end, imageSize: size))
  }

  @Test func aShareFiresOnTheFirstDataPastItAndOnlyOnce() throws {
    var book = FaultBook()
    book.add(try Fault(parsing: "drop-link after=37%"))
    #expect(book.fire(Self.data(370)).isEmpty, "at 37 % exactly: not past it")
    let fired = book.fire(Self.data(371))
    #expect(fired.map(\.description) == ["fault 1 fired (1 of 1): drop-link after=37% times=1"])
    #expect(book.fire(Self.data(900)).isEmpty, "spent")
    #expect(book.entries[0].spent)
    #expect(book.fire(Self.data(500, of: nil)).isEmpty)
  }

  @Test func aShareOfAnUnknownSizeIsNeverDueButBytesAre() throws {
    var book = FaultBook()
    book.add(try Fault(parsing: "lose-chunk after=50% times=always"))
    book.add(try Fault(parsing: "corrupt-chunk after=100 times=always"))
    #expect(book.fire(Self.data(999, of: nil)).map(\.id) == [2])
    #expect(book.fire(Self.data(999, of: 1000)).map(\.id) == [1, 2])
  }

  @Test func eachActionIsDueOnlyAtItsKindOfMoment() throws {
    var book = FaultBook()
    book.add(try Fault(parsing: "refuse at=validate status=busy times=always"))
    book.add(try Fault(parsing: "delay by=1s at=validate times=always"))
    book.add(try Fault(parsing: "fail-health-check times=always"))
    book.add(try Fault(parsing: "lose-chunk times=always"))
    book.add(try Fault(parsing: "drop-link at=activate times=always"))
    let progress = FaultBook.Progress(end: 1000, imageSize: 1000)
    #expect(book.fire(.request(.ota(.validate), progress)).map(\.id) == [1])
    #expect(book.fire(.answer(.ota(.validate), progress)).map(\.id) == [2])
    #expect(book.fire(.answer(.ota(.window), progress)).isEmpty, "the delay names VALIDATE's answers")
    #expect(book.fire(.trialStarts).map(\.id) == [3])
    #expect(book.fire(Self.data(10)).map(\.id) == [4])
    #expect(book.fire(.request(.ota(.activate), progress)).map(\.id) == [5])
    #expect(book.fire(.request(.smp(.upload), progress)).isEmpty)
  }

  @Test func aRequestFaultWithAPointWaitsForTheCommittedData() throws {
    var book = FaultBook()
    book.add(try Fault(parsing: "refuse at=window status=busy after=50% times=always"))
    #expect(book.fire(.request(.ota(.window), .init(end: 400, imageSize: 1000))).isEmpty)
    #expect(book.fire(.request(.ota(.window), .init(end: 600, imageSize: 1000))).count == 1)
  }

  @Test func countsAndAlwaysFireAsOftenAsTheySay() throws {
    var book = FaultBook()
    book.add(try Fault(parsing: "lose-chunk times=3"))
    book.add(try Fault(parsing: "corrupt-chunk times=always"))
    var fired: [Int: Int] = [:]
    for end in 1...10 { for fault in book.fire(Self.data(UInt64(end))) { fired[fault.id, default: 0] += 1 } }
    #expect(fired == [1: 3, 2: 10])
    #expect(book.entries.map(\.fired) == [3, 10])
  }

  @Test func aChanceReplaysFromItsSeedAndStopsAtItsCount() throws {
    func firings(_ line: String) throws -> [Bool] {
      var book = FaultBook()
      book.add(try Fault(parsing: line))
      return (1...2000).map { !book.fire(Self.data(UInt64($0), of: nil)).isEmpty }
    }
    let first = try firings("lose-chunk chance=0.25 seed=7")
    #expect(try firings("lose-chunk chance=0.25 seed=7") == first, "the same seed, the same run")
    #expect(try firings("lose-chunk chance=0.25 seed=8") != first)
    let share = Double(first.filter { $0 }.count) / Double(first.count)
    #expect(share > 0.2 && share < 0.3, "\(share)")
    #expect(try firings("lose-chunk chance=0.25 seed=7 times=5").filter { $0 }.count == 5)
    #expect(try firings("lose-chunk chance=1 seed=3").allSatisfy { $0 })
  }

  @Test func theBookReadsBackAsStoredWithWhatFired() throws {
    var book = FaultBook()
    book.add(try Fault(parsing: "drop-link after=37%"), origin: .configuration)
    book.add(try Fault(parsing: "delay by=250ms at=window chance=0.5 seed=9"))
    book.add(try Fault(parsing: "refuse at=smp-upload rc=10 times=2"))
    _ = book.fire(Self.data(500))
    for _ in 0..<5 { _ = book.fire(.answer(.ota(.window), .start)) }
    let removed = book.remove(id: 3)
    #expect(removed)
    book.add(try Fault(parsing: "fail-health-check"))
    let stored = try FaultBook(stored: book.encoded)
    #expect(stored == book)
    var next = stored
    let id = next.add(try Fault(parsing: "corrupt-chunk"))
    #expect(id == 5, "numbers are not reused after a restart")
  }

  @Test(arguments: [
    "", "drop-link after=37%\n", "otad faults 1\n1 control 0 0 explode\n",
    "otad faults 1\n1 control x 0 corrupt-chunk times=1\n",
    "otad faults 1\n1 nobody 0 0 corrupt-chunk times=1\n",
    "otad faults 1\n1 control 0 0 corrupt-chunk times=1\n1 control 0 0 corrupt-chunk times=1\n",
    "otad faults 1\n0 control 0 0 corrupt-chunk times=1\n", "otad faults 2\n",
  ])
  func aDamagedFileIsRefusedWhole(text: String) {
    #expect(throws: FaultSpecError.self) { _ = try FaultBook(stored: text) }
  }

  @Test func aFileOfMoreFaultsThanTheBookHoldsIsRefused() {
    let lines = (1...33).map { "\($0) control 0 0 corrupt-chunk times=1" }
    #expect(throws: FaultSpecError.self) {
      _ = try FaultBook(stored: "otad faults 1\n" + lines.joined(separator: "\n"))
    }
  }

  @Test func theConfigurationsFaultsAreSetAgainAtAStartKeepingWhatFired() throws {
    var book = FaultBook()
    let drop = try Fault(parsing: "drop-link after=37%")
    let lose = try Fault(parsing: "lose-chunk times=2")
    book.setConfigured([drop, lose])
    book.add(try Fault(parsing: "corrupt-chunk"))
    _ = book.fire(Self.data(500))
    #expect(book.entries.map(\.fired) == [1, 1, 1])
    // A restart with the same configuration: nothing new, what fired is kept.
    book.setConfigured([drop, lose])
    #expect(book.entries.map(\.id) == [1, 2, 3])
    #expect(book.entries.map(\.fired) == [1, 1, 1])
    // The configuration drops one and names another: the control's fault stays.
    let delay = try Fault(parsing: "delay by=1s")
    book.setConfigured([lose, delay])
    #expect(book.entries.map(\.fault) == [lose, try Fault(parsing: "corrupt-chunk"), delay])
    #expect(book.entries.map(\.origin) == [.configuration, .control, .configuration])
  }

  @Test func theBookHoldsAtMostItsCapacity() throws {
    var book = FaultBook()
    for _ in 0..<FaultBook.capacity { book.add(try Fault(parsing: "corrupt-chunk")) }
    #expect(book.entries.count == FaultBook.capacity)
    let refused = book.add(try Fault(parsing: "corrupt-chunk"))
    #expect(refused == nil)
  }
}

/// The fault control's commands (`otad fault ...`): what each answers and changes.
@Suite struct FaultControlCommandTests {
  func run(_ line: String, _ book: inout FaultBook) throws -> (answer: String, changed: Bool) {
    try FaultControlCommand(line: line).apply(to: &book)
  }

  @Test func addListRemoveClear() throws {
    var book = FaultBook()
    let add = try FaultControlCommand(line: "add drop-link after=37%")
    #expect(add == .add(try Fault(parsing: "drop-link after=37%")))
    #expect(add.line == "add drop-link after=37% times=1")
    let added = add.apply(to: &book)
    #expect(added == ("added fault 1: drop-link after=37% times=1", true))
    let second = try run("add refuse at=activate status=busy", &book)
    #expect(second.changed)
    _ = book.fire(.data(.init(end: 900, imageSize: 1000)))
    let list = try run("list", &book)
    #expect(
      list.answer == """
        1: drop-link after=37% times=1 (fired 1, spent; from the control)
        2: refuse status=busy at=activate times=1 (fired 0; from the control)
        """)
    #expect(!list.changed)
    let removed = try run("remove 1", &book)
    #expect(removed == ("removed fault 1", true))
    let again = try run("remove 1", &book)
    #expect(again == ("error: no fault 1 (list shows them)", false))
    let cleared = try run("clear", &book)
    #expect(cleared == ("cleared 1 fault", true))
    let empty = try run("list", &book)
    #expect(empty == ("no faults", false))
  }

  @Test(arguments: [
    "", "add", "add explode", "remove", "remove x", "remove -1", "clear all", "list 3", "hello",
  ])
  func aLineThatIsNoCommandIsRefused(line: String) {
    #expect(throws: FaultSpecError.self) { _ = try FaultControlCommand(line: line) }
  }

  @Test func aFullBookRefusesAnotherFault() throws {
    var book = FaultBook()
    for _ in 0..<FaultBook.capacity { book.add(try Fault(parsing: "corrupt-chunk")) }
    let answer = try run("add lose-chunk", &book)
    #expect(answer.answer.hasPrefix("error: the device holds 32 faults already"))
    #expect(!answer.changed)
  }
}
