import Foundation
import Testing

/// docs/ARCHITECTURE.md's module graph, held against Package.swift and every import line.
@Suite struct ArchitectureTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func swiftFiles(under folder: String) throws -> [String: [(file: String, text: String)]] {
    let base = root.appendingPathComponent(folder)
    var byTarget: [String: [(file: String, text: String)]] = [:]
    for target in try FileManager.default.contentsOfDirectory(atPath: base.path).sorted() {
      let directory = base.appendingPathComponent(target)
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory),
        isDirectory.boolValue
      else { continue }
      var files: [(file: String, text: String)] = []
      let walker = FileManager.default.enumerator(atPath: directory.path)
      while let relative = walker?.nextObject() as? String {
        guard relative.hasSuffix(".swift") else { continue }
        let text = try String(contentsOf: directory.appendingPathComponent(relative), encoding: .utf8)
        files.append(("\(folder)/\(target)/\(relative)", text))
      }
      byTarget[target] = files
    }
    return byTarget
  }

  static func text(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  @Test func theCodeKeepsToTheModuleGraph() throws {
    let graph = ModuleGraph(doc: try Self.text("docs/ARCHITECTURE.md"))
    #expect(graph.allowed.count >= 20, "the doc's table was read")
    let violations = graph.violations(
      manifest: try Self.text("Package.swift"), sources: try Self.swiftFiles(under: "Sources"),
      tests: try Self.swiftFiles(under: "Tests"))
    #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
  }

  /// Issue 11's rule: the system layer is the only source target that may reach Glibc or CLinux.
  @Test func onlyTheSystemLayerReachesTheOS() throws {
    let graph = ModuleGraph(doc: try Self.text("docs/ARCHITECTURE.md"))
    let reaching = graph.allowed.filter { !$0.value.isDisjoint(with: ["Glibc", "CLinux"]) }.keys.sorted()
    // CLinux is the C module itself: it wraps Glibc's headers.
    #expect(reaching == ["CLinux", "OTASystem"])
  }

  @Test func theManifestIsReadWithItsDependencies() throws {
    let targets = ModuleGraph.packageTargets(try Self.text("Package.swift"))
    #expect(targets["OTAEngine"] == ["OTAJournal", "OTAWire", "OTAChecksum"])
    #expect(
      targets["OTABoot"]?.contains("OTAEngine") == false, "the boot stage reads the journal, not the engine")
    #expect(targets["OTATrust"] == ["OTAWire", "OTAChecksum", "Crypto", "CryptoExtras"])
    #expect(
      targets["FuzzTargets"] == ["OTAFuzzing", "OTATrustFuzzing", "OTADeviceFuzzing", "OTAGatewayFuzzing"])
    #expect(targets["ProcessTests"] == ["OTATestSupport", "OTAReport"])
  }

  /// Issue 48: README's layout names every source target, so a newcomer's map has no blank rooms.
  @Test func theReadmeLayoutNamesEveryTarget() throws {
    let targets = ModuleGraph.packageTargets(try Self.text("Package.swift")).keys
    let missing = Self.unnamedTargets(targets, in: try Self.text("README.md"))
    #expect(missing.isEmpty, "README.md's Layout does not name: \(missing.joined(separator: ", "))")
  }

  /// The source targets (test targets aside) that the text's Layout section does not name in backticks.
  static func unnamedTargets(_ targets: some Sequence<String>, in readme: String) -> [String] {
    let layout =
      readme.components(separatedBy: "\n## Layout").dropFirst().first?
      .components(separatedBy: "\n## ").first ?? ""
    return targets.filter { !$0.hasSuffix("Tests") && !layout.contains("`\($0)`") }.sorted()
  }

  @Test func aTargetTheLayoutLeavesOutIsNamed() {
    let readme = "# X\n## Layout\n`OTAWire`, `otad`\n## License\n`OTAEngine`\n"
    #expect(
      Self.unnamedTargets(["OTAWire", "OTAEngine", "otad", "OTAWireTests"], in: readme) == ["OTAEngine"])
  }

  /// Issue 16's rule: the lab's web server is ota-lab's alone; the daemon and the central link none.
  @Test func onlyTheLabLinksAWebServer() throws {
    let targets = ModuleGraph.packageTargets(try Self.text("Package.swift"))
    #expect(ModuleGraph.linked(by: "ota-lab", in: targets).contains("FlyingFox"))
    for executable in ["otad", "otactl", "ota-bench"] {
      #expect(!ModuleGraph.linked(by: executable, in: targets).contains("FlyingFox"), "\(executable)")
    }
  }

  /// otad's links are followed through the manifest: the real daemon reaches storage, and a testing
  /// target two steps away is reported.
  @Test func otadLinksNoTestingTarget() throws {
    let linked = ModuleGraph.linked(
      by: "otad", in: ModuleGraph.packageTargets(try Self.text("Package.swift")))
    #expect(linked.contains("OTAStorage"))
    #expect(linked.contains("OTAWire"), "followed through OTADaemon")
    #expect(!linked.contains("OTAStorageTesting"))

    let graph = ModuleGraph(
      doc: """
        | target | owns | may import |
        |---|---|---|
        | OTAStorageTesting | fakes | — |
        | OTADevice | composition | OTAStorageTesting |
        | otad | the daemon | OTADevice |
        """)
    let manifest = """
      .target(name: "OTAStorageTesting"),
      .target(name: "OTADevice", dependencies: ["OTAStorageTesting"]),
      .executableTarget(name: "otad", dependencies: ["OTADevice"]),
      """
    let sources: [String: [(file: String, text: String)]] = [
      "OTAStorageTesting": [],
      "OTADevice": [("Sources/OTADevice/A.swift", "import OTAStorageTesting")],
      "otad": [("Sources/otad/B.swift", "import OTADevice")],
    ]
    #expect(
      graph.violations(manifest: manifest, sources: sources, tests: [:])
        == ["Package.swift: otad links the testing target OTAStorageTesting"])
  }

  /// The checker finds what the rules forbid: a Glibc import or call in the wire layer, a target
  /// missing from the doc, a test importing another target, a dependency the row does not allow.
  @Test func aBrokenGraphIsReported() {
    let graph = ModuleGraph(
      doc: """
        | target | owns | may import |
        |---|---|---|
        | OTAWire | values | — |
        | OTAEngine | machines | OTAWire |
        """)
    let manifest = """
      .target(name: "OTAWire"),
      .target(name: "OTAEngine", dependencies: ["OTAWire", "OTAStorage"]),
      .testTarget(name: "OTAWireTests", dependencies: ["OTAWire"]),
      """
    let violations = graph.violations(
      manifest: manifest,
      sources: [
        "OTAWire": [
          ("Sources/OTAWire/A.swift", "import Glibc\nlet x = 1"),
          ("Sources/OTAWire/B.swift", "let y = Glibc.errno"),
        ],
        "OTAEngine": [("Sources/OTAEngine/C.swift", "import OTAWire\n@testable import OTALink.Thing")],
        "OTAExtra": [("Sources/OTAExtra/D.swift", "")],
      ],
      tests: [
        "OTAWireTests": [("Tests/OTAWireTests/T.swift", "import Testing\nimport OTAWire\nimport OTAEngine")]
      ])
    #expect(
      violations == [
        "Package.swift: OTAEngine depends on OTAStorage",
        "Package.swift: OTAEngine depends on OTAStorage and imports it nowhere",
        "Sources/OTAEngine/C.swift imports OTALink",
        "Sources/OTAExtra has no row in docs/ARCHITECTURE.md",
        "Sources/OTAWire/A.swift imports Glibc",
        "Sources/OTAWire/B.swift calls Glibc",
        "Tests/OTAWireTests/T.swift imports OTAEngine",
      ])
  }

  /// A module the doc allows but the manifest does not give the target builds only through another
  /// target's dependencies; a product counts as the package's as soon as some target names it.
  @Test func anImportTheManifestDoesNotDeclareIsReported() {
    let manifest = """
      .target(name: "OTAWire"),
      .target(name: "OTAChecksum"),
      .target(name: "OTAEngine", dependencies: ["OTAChecksum"]),
      .target(name: "OTATrust", dependencies: ["OTAWire", .product(name: "Crypto", package: "swift-crypto")]),
      """
    let found = ModuleGraph.undeclared(
      ModuleGraph.packageTargets(manifest),
      sources: [
        "OTAEngine": [
          (
            "Sources/OTAEngine/A.swift",
            "import OTAChecksum\nimport OTAWire\nimport Crypto\nimport Foundation"
          )
        ],
        "OTATrust": [("Sources/OTATrust/B.swift", "import OTAWire\nimport Crypto")],
      ])
    #expect(
      found.sorted() == [
        "Sources/OTAEngine/A.swift imports Crypto, which Package.swift does not give OTAEngine",
        "Sources/OTAEngine/A.swift imports OTAWire, which Package.swift does not give OTAEngine",
      ])
  }
}
