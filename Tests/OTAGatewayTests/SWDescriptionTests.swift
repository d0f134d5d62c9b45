import OTAGateway
import Testing

/// sw-description as SWUpdate writes it (libconfig), read for its version, boards and images.
struct SWDescriptionTests {
  /// In the shapes SWUpdate's documentation shows: comments of all three kinds, `:` and `=`,
  /// board sections with hardware-compatibility, a nested selection, joined strings, numbers.
  static let text = """
    # A release for two boards
    software =
    {
      version = "2.1.0+7";
      description = "Firmware " "update";   // joined
      bootloader_transaction_marker = false;
      rpi4 = {
        hardware-compatibility: [ "1.4", "1.5" ];
        images: (
          {
            filename = "fw-rpi4.bin";
            type = "blueota-mcuboot";
            sha256 = "ab";
            offset = 0x1000;
          }
        );
      };
      /* a board with two selections */
      cm4 = {
        stable = {
          hardware-compatibility = [ "2.0" ];
          images: ( { filename = "fw-cm4.bin"; type = "blueota-mcuboot"; } );
        };
      };
    };
    """

  @Test func boardsRevisionsAndImagesAreRead() throws {
    let description = try SWDescription(text: Self.text)
    #expect(description.version == "2.1.0+7")
    #expect(description.targets.map(\.board) == ["rpi4", "cm4"])
    let rpi4 = try #require(description.target(model: "rpi4", revision: "1.5"))
    #expect(rpi4.images == [.init(filename: "fw-rpi4.bin", type: "blueota-mcuboot", sha256: "ab")])
    #expect(description.target(model: "rpi4", revision: "1.3") == nil)
    #expect(description.target(model: "cm4", revision: "2.0")?.images.first?.filename == "fw-cm4.bin")
    #expect(description.target(model: "default", revision: "default") == nil)
    #expect(description.hardwareText == "rpi4 1.4 or 1.5, cm4 2.0")
  }

  @Test func whatPackWritesReadsBack() throws {
    let written = SWDescription(
      version: "3.0.0+1",
      targets: [
        .init(
          board: "blueota-sim", revisions: ["1.0"],
          images: [
            .init(filename: "f.bin", type: SWDescription.imageType, sha256: String(repeating: "c", count: 64))
          ])
      ])
    let read = try SWDescription(text: written.text(description: #"a "quoted" \ line"#))
    #expect(read == written)
    let anyRevision = SWDescription(
      version: "1.0.0+0",
      targets: [
        .init(board: "default", revisions: [], images: [.init(filename: "x", type: nil, sha256: nil)])
      ])
    let back = try SWDescription(text: anyRevision.text(description: "d"))
    #expect(back == anyRevision)
    #expect(back.target(model: "default", revision: "anything") != nil)
  }

  /// Strings read with escapes (`\n`, `\x01`) are written with escapes: a raw newline would end
  /// the string's line, and the text pack writes would not read (found by the libconfig fuzz target,
  /// Regressions/libconfig/escaped-newline-in-a-filename-written-raw).
  @Test func controlCharactersAreWrittenAsEscapesThatReadBack() throws {
    let odd = "a\nb\tc\rd\u{0C}e\u{01}f\u{7F}g\"h\\i"
    let written = SWDescription(
      version: odd,
      targets: [
        .init(board: "sim", revisions: [odd], images: [.init(filename: odd, type: odd, sha256: odd)])
      ])
    let text = written.text(description: odd)
    // No control character but the text's own line ends.
    #expect(!text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }, "\(text)")
    #expect(try SWDescription(text: text) == written)
    let read = try SWDescription(text: #"software={version="t"images:({filename="\n"})}"#)
    #expect(try SWDescription(text: read.text(description: "")) == read)
  }

  @Test(arguments: [
    ("", "no 'software' group"),
    ("software = { description = \"x\"; };", "no software.version"),
    ("software = { version = \"1\"", "line 1: the group is not closed"),
    ("software = {\n version = \"1\";\n version = \"2\"; };", "line 3: 'version' is set twice"),
    ("software = { version = \"1\"; b = { hardware-compatibility = \"1.0\"; }; };", "is not an array"),
    ("software = { version = \"1\"; b = { images: ( { type = \"x\"; } ); }; };", "has no filename"),
    ("software = { version = \"1\nx\"; };", "runs past the end of its line"),
    ("a = [ { b = 1; } ];", "scalars only"),
    ("a = @;", "is not a value"),
    ("/* open", "a comment is not closed"),
  ])
  func brokenTextIsRefusedWithWhereAndWhy(text: String, reason: String) {
    do {
      _ = try SWDescription(text: text)
      Issue.record("read: \(text)")
    } catch {
      #expect(error.description.contains(reason), "\(error)")
    }
  }

  @Test func nestingIsBounded() {
    let deep = "a = " + String(repeating: "(", count: 40) + String(repeating: ")", count: 40) + ";"
    #expect(throws: LibconfigError.self) { try LibconfigParser.parse(deep) }
    let fine = "a = " + String(repeating: "(", count: 20) + String(repeating: ")", count: 20) + ";"
    #expect(throws: Never.self) { try LibconfigParser.parse(fine) }
  }

  /// A group's names are checked for repeats as they come: compared each with all before it, a
  /// sw-description of 1 MiB (the parser's bound) with 116,000 settings took 12 s in a release build.
  @Test func aGroupAsLargeAsTheBoundIsReadInLinearTime() throws {
    var text = "a = {\n"
    var count = 0
    while text.utf8.count < (1 << 20) - 64 {
      text += "s\(count)=1;"
      count += 1
    }
    var parsed: LibconfigValue?
    let elapsed = try ContinuousClock().measure { parsed = try LibconfigParser.parse(text + "};") }
    #expect(parsed?["a"]?.settings?.count == count)
    #expect(elapsed < .seconds(10), "\(elapsed)")
    do {
      _ = try LibconfigParser.parse(text + "s0=2; };")
      Issue.record("a repeated name was read")
    } catch {
      #expect(error.message == "'s0' is set twice")
    }
  }

  @Test func scalarsAreTyped() throws {
    let value = try LibconfigParser.parse("a = 12; b = 0x10L; c = -1.5e2; d = TRUE; e = \"\\x41\\t\";")
    #expect(value["a"] == .integer(12))
    #expect(value["b"] == .integer(16))
    #expect(value["c"] == .float(-150))
    #expect(value["d"] == .boolean(true))
    #expect(value["e"] == .string("A\t"))
  }

  /// What libconfig's grammar does not write is refused, though Swift's number parsers would take
  /// it: a sign after `0x` or in a `\x` escape (`Int64("-1", radix: 16)` is -1), `nan`, `inf`, hex
  /// floats and a float too large for a double (read as infinity).
  @Test(arguments: [
    "a = 0x-1;", "a = 0x+5;", "a = -0x10;", "a = 0x1p3;", "a = 0xFFFFFFFFFFFFFFFF;", "a = nan;", "a = inf;",
    "a = -infinity;", "a = 1e400;", #"a = "\x+F";"#, #"a = "\x-0";"#, #"a = "\x F";"#,
  ])
  func whatLibconfigDoesNotWriteIsNoValue(text: String) {
    #expect(throws: LibconfigError.self, "\(text)") { _ = try LibconfigParser.parse(text) }
  }

  @Test func numbersInLibconfigsNotationsAreRead() throws {
    let value = try LibconfigParser.parse("a = -7; b = +7; c = 0XfF; d = .5; e = 5.; f = 1e-3; g = 12LL;")
    #expect(value["a"] == .integer(-7))
    #expect(value["b"] == .integer(7))
    #expect(value["c"] == .integer(255))
    #expect(value["d"] == .float(0.5))
    #expect(value["e"] == .float(5))
    #expect(value["f"] == .float(0.001))
    #expect(value["g"] == .integer(12))
  }
}
