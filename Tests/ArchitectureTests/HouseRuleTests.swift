import Foundation
import Testing

/// Issue 26's rules: no library target grows past a size nobody explained, the daemon links none of
/// the central's planning, the lab none of the daemon's configuration or keys, and otad none of
/// Foundation's full library.
@Suite struct HouseRuleTests {
  static let sizeLimit = 2_500

  /// The library targets under Sources (executables, C modules and fuzz targets aside) and their lines.
  static func libraryLines() throws -> [String: Int] {
    let targets = ModuleGraph.packageTargets(try ArchitectureTests.text("Package.swift"))
    let files = try ArchitectureTests.swiftFiles(under: "Sources")
    var lines: [String: Int] = [:]
    for (target, sources) in files where targets[target] != nil && !executables.contains(target) {
      lines[target] = sources.reduce(0) {
        $0 + $1.text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
      }
    }
    return lines
  }

  static let executables: Set<String> = ["otad", "otactl", "ota-lab", "ota-bench", "FuzzTargets"]

  /// The targets docs/ARCHITECTURE.md explains under "## Targets over 2,500 lines": one bullet each,
  /// "- `Name` ...".
  static func justified(in doc: String) -> Set<String> {
    guard let start = doc.range(of: "## Targets over 2,500 lines") else { return [] }
    var names: Set<String> = []
    for line in doc[start.upperBound...].split(separator: "\n") {
      if line.hasPrefix("## ") { break }
      guard line.hasPrefix("- `"), let close = line.dropFirst(3).firstIndex(of: "`") else { continue }
      names.insert(String(line[line.index(line.startIndex, offsetBy: 3)..<close]))
    }
    return names
  }

  /// Every target over the limit without a line saying why, and every line for a target no longer over it.
  static func sizeViolations(lines: [String: Int], justified: Set<String>, limit: Int) -> [String] {
    var found: [String] = []
    for (target, count) in lines.sorted(by: { $0.key < $1.key }) {
      if count > limit && !justified.contains(target) {
        found.append("\(target) has \(count) lines, over \(limit), and docs/ARCHITECTURE.md does not say why")
      }
      if count <= limit && justified.contains(target) {
        found.append("\(target) has \(count) lines: its line under \"Targets over 2,500 lines\" is stale")
      }
    }
    for target in justified.subtracting(lines.keys).sorted() {
      found.append("docs/ARCHITECTURE.md explains the size of \(target), which is no library target")
    }
    return found
  }

  /// The sizes docs/ARCHITECTURE.md states under "## Targets over 2,500 lines" ("- `Name` (about
  /// 2,600 lines)"), by target.
  static func statedSizes(in doc: String) -> [String: Int] {
    guard let start = doc.range(of: "## Targets over 2,500 lines") else { return [:] }
    var sizes: [String: Int] = [:]
    for line in doc[start.upperBound...].split(separator: "\n") {
      if line.hasPrefix("## ") { break }
      guard line.hasPrefix("- `"), let close = line.dropFirst(3).firstIndex(of: "`"),
        let about = line.range(of: "(about "), let end = line[about.upperBound...].range(of: " lines)")
      else { continue }
      let name = String(line[line.index(line.startIndex, offsetBy: 3)..<close])
      let digits = line[about.upperBound..<end.lowerBound].filter(\.isNumber)
      if let count = Int(digits) { sizes[name] = count }
    }
    return sizes
  }

  /// Every stated size more than a tenth away from the target's count.
  static func staleSizes(stated: [String: Int], lines: [String: Int]) -> [String] {
    stated.sorted(by: { $0.key < $1.key }).compactMap { target, size in
      guard let count = lines[target], abs(count - size) * 10 > count else { return nil }
      return "docs/ARCHITECTURE.md says \(target) has about \(size) lines; it has \(count)"
    }
  }

  /// A newcomer reads the sizes as facts: each within a tenth of the count.
  @Test func theStatedSizesAreTheTargetsSizes() throws {
    let stated = Self.statedSizes(in: try ArchitectureTests.text("docs/ARCHITECTURE.md"))
    #expect(stated.count >= 4, "the sizes were read: \(stated)")
    let stale = Self.staleSizes(stated: stated, lines: try Self.libraryLines())
    #expect(stale.isEmpty, "\(stale.joined(separator: "\n"))")
    #expect(
      Self.staleSizes(stated: ["Big": 3_000, "Near": 2_600], lines: ["Big": 3_400, "Near": 2_700])
        == ["docs/ARCHITECTURE.md says Big has about 3000 lines; it has 3400"])
  }

  @Test func noLibraryTargetOutgrowsTheLimitUnexplained() throws {
    let lines = try Self.libraryLines()
    #expect(lines["OTAWire"].map { $0 > 500 } == true, "the sources were counted")
    let doc = try ArchitectureTests.text("docs/ARCHITECTURE.md")
    let violations = Self.sizeViolations(
      lines: lines, justified: Self.justified(in: doc), limit: Self.sizeLimit)
    #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
  }

  @Test func theSizeRuleReportsWhatItForbids() {
    let doc = """
      ## Targets over 2,500 lines
      - `Big` (3,000 lines): one job that does not split.
      - `Shrunk` (was 2,600 lines).
      - `Gone`: deleted.
      ## Next
      - `Small`: not in the section.
      """
    #expect(Self.justified(in: doc) == ["Big", "Shrunk", "Gone"])
    let violations = Self.sizeViolations(
      lines: ["Big": 3_000, "Huge": 2_501, "Shrunk": 2_500, "Small": 10], justified: Self.justified(in: doc),
      limit: 2_500)
    #expect(
      violations == [
        "Huge has 2501 lines, over 2500, and docs/ARCHITECTURE.md does not say why",
        "Shrunk has 2500 lines: its line under \"Targets over 2,500 lines\" is stale",
        "docs/ARCHITECTURE.md explains the size of Gone, which is no library target",
      ])
  }

  /// The central's delta planning and sender engine are the central's: the daemon links neither.
  @Test func otadLinksNoneOfTheCentralsPlanning() throws {
    let targets = ModuleGraph.packageTargets(try ArchitectureTests.text("Package.swift"))
    let otad = ModuleGraph.linked(by: "otad", in: targets)
    #expect(otad.contains("OTAEngine"), "the receiver engine is linked")
    for central in ["OTADeltaPlan", "OTASender", "OTACentral"] {
      #expect(targets[central] != nil, "\(central) is a target")
      #expect(!otad.contains(central), "otad links \(central)")
    }
    #expect(ModuleGraph.linked(by: "otactl", in: targets).isSuperset(of: ["OTADeltaPlan", "OTASender"]))
  }

  /// TOML is read in one room; the lab's page model, a view of a report, links neither it, nor the
  /// daemon, nor the keys' crypto; the lab itself reads otad's files through the daemon but no TOML.
  @Test func onlyTheConfigurationReadsTOMLAndTheLabsPageReadsOnlyTheReport() throws {
    let targets = ModuleGraph.packageTargets(try ArchitectureTests.text("Package.swift"))
    #expect(targets.filter { $0.value.contains("TOMLKit") }.keys.sorted() == ["OTAConfiguration"])
    let page = ModuleGraph.linked(by: "OTALab", in: targets)
    #expect(page.contains("OTAReport"), "the page reads the report")
    for heavy in ["TOMLKit", "Crypto", "OTADaemon", "OTAConfiguration", "OTATrust", "OTABoot"] {
      #expect(!page.contains(heavy), "OTALab links \(heavy)")
    }
    let lab = ModuleGraph.linked(by: "ota-lab", in: targets)
    #expect(lab.contains("OTALab"))
    #expect(!lab.contains("TOMLKit") && !lab.contains("OTAConfiguration"), "ota-lab links the TOML reader")
  }

  /// otad and every target it links import FoundationEssentials at most: Foundation's full library
  /// (ICU's data among it) would be most of the static binary a board carries.
  @Test func otadImportsNoFullFoundation() throws {
    let targets = ModuleGraph.packageTargets(try ArchitectureTests.text("Package.swift"))
    let linked = ModuleGraph.linked(by: "otad", in: targets).union(["otad"])
    let files = try ArchitectureTests.swiftFiles(under: "Sources")
    var offenders: [String] = []
    for target in linked.sorted() {
      for file in files[target] ?? [] where ModuleGraph.imports(in: file.text).modules.contains("Foundation")
      {
        offenders.append(file.file)
      }
    }
    #expect(!linked.intersection(files.keys).isEmpty, "otad's targets were read")
    #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
  }
}
