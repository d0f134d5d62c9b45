import Foundation

/// The module graph as docs/ARCHITECTURE.md allows it, and the checks of the code against it:
/// pure functions over text, so that a test can also feed them a graph that breaks a rule.
struct ModuleGraph {
  /// What each source target may import (its row in the doc's first table).
  var allowed: [String: Set<String>]
  /// What each test target may import beyond the common rule (the doc's second table).
  var testExtras: [String: Set<String>]

  static let testCommon: Set<String> = ["Testing", "Foundation", "Synchronization", "Glibc"]
  static let testSupport: Set<String> = ["OTATestSupport", "DBusTestSupport", "OTASimulation"]
  /// Test targets that import no project target but what the doc's second table gives them.
  static let blackBoxTests: Set<String> = ["ProcessTests", "ArchitectureTests"]

  /// Reads the two tables of docs/ARCHITECTURE.md.
  init(doc: String) {
    allowed = [:]
    testExtras = [:]
    var section = 0
    for line in doc.split(separator: "\n") {
      if line.hasPrefix("| target |") { section = 1 }
      if line.hasPrefix("| test target |") { section = 2 }
      guard line.hasPrefix("| "), !line.hasPrefix("| target"), !line.hasPrefix("| test target") else {
        continue
      }
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let name = cells.first, let last = cells.last else { continue }
      let names = Set(
        last.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
          $0 != "—" && !$0.isEmpty
        })
      if section == 1 { allowed[name] = names } else if section == 2 { testExtras[name] = names }
    }
  }

  /// What a test target may import.
  func allowedInTest(_ testTarget: String) -> Set<String> {
    if Self.blackBoxTests.contains(testTarget) { return Self.testCommon.union(testExtras[testTarget] ?? []) }
    let tested = String(testTarget.dropLast("Tests".count))
    return Self.testCommon.union(Self.testSupport).union([tested]).union(allowed[tested] ?? [])
      .union(testExtras[testTarget] ?? [])
  }

  /// The modules a Swift file imports, and whether it calls `Glibc.` by name.
  static func imports(in source: String) -> (modules: Set<String>, callsGlibc: Bool) {
    var modules: Set<String> = []
    for line in source.split(separator: "\n") {
      var words = line.split(separator: " ").map(String.init)
      if words.first == "@testable" { words.removeFirst() }
      if words.first == "@preconcurrency" { words.removeFirst() }
      guard words.count >= 2, words[0] == "import" else { continue }
      // `import struct Foo.Bar` and `import Foo.Bar` both name module Foo.
      let module =
        words.count >= 3 && ["struct", "class", "enum", "func", "protocol"].contains(words[1])
        ? words[2] : words[1]
      modules.insert(String(module.split(separator: ".")[0]))
    }
    return (modules, source.contains("Glibc."))
  }

  /// Each target declared in Package.swift with its dependencies (target and product names).
  static func packageTargets(_ manifest: String) -> [String: Set<String>] {
    let kinds = [".target(", ".executableTarget(", ".testTarget(", ".systemLibrary("]
    var starts: [String.Index] = []
    var searchFrom = manifest.startIndex
    while let range = kinds.compactMap({ manifest.range(of: $0, range: searchFrom..<manifest.endIndex) })
      .min(by: { $0.lowerBound < $1.lowerBound })
    {
      starts.append(range.lowerBound)
      searchFrom = range.upperBound
    }
    var targets: [String: Set<String>] = [:]
    for (index, start) in starts.enumerated() {
      let end = index + 1 < starts.count ? starts[index + 1] : manifest.endIndex
      let chunk = String(manifest[start..<end])
      guard let name = firstString(after: "name: ", in: chunk) else { continue }
      var dependencies: Set<String> = []
      if let range = chunk.range(of: "dependencies:") {
        var tail = String(chunk[range.upperBound...])
        for stop in ["path:", "exclude:", "swiftSettings:", "resources:", "\n    ),", "\n  ]"] {
          if let cut = tail.range(of: stop) { tail = String(tail[..<cut.lowerBound]) }
        }
        for literal in stringLiterals(in: tail) where !literal.notADependency {
          dependencies.insert(literal.value)
        }
      }
      // The fuzz executables are named "fuzz-\(name)": they live in FuzzTargets.
      targets[name.hasPrefix("fuzz-") ? "FuzzTargets" : name, default: []].formUnion(dependencies)
    }
    return targets
  }

  static func firstString(after marker: String, in text: String) -> String? {
    guard let range = text.range(of: marker + "\"") else { return nil }
    let rest = text[range.upperBound...]
    guard let close = rest.firstIndex(of: "\"") else { return nil }
    return String(rest[..<close])
  }

  static func stringLiterals(in text: String) -> [(value: String, notADependency: Bool)] {
    var literals: [(String, Bool)] = []
    var index = text.startIndex
    while let open = text[index...].firstIndex(of: "\"") {
      let afterOpen = text.index(after: open)
      guard let close = text[afterOpen...].firstIndex(of: "\"") else { break }
      let before = text[text.startIndex..<open].suffix(10)
      let after = text[text.index(after: close)...].drop { $0 == " " || $0 == "\n" }.prefix(1)
      // `package: "swift-log"` names a package, and `name == "trust" ?` (the `?` perhaps on the
      // next line) is a condition.
      literals.append((String(text[afterOpen..<close]), before.hasSuffix("package: ") || after == "?"))
      index = text.index(after: close)
    }
    return literals
  }

  /// Targets made only for tests: their names end in `Testing` or `TestSupport`.
  static func isTestingTarget(_ name: String) -> Bool {
    name.hasSuffix("Testing") || name.hasSuffix("TestSupport")
  }

  /// Everything `target` links: its dependencies, theirs, and so on through the manifest's targets.
  static func linked(by target: String, in targets: [String: Set<String>]) -> Set<String> {
    var seen: Set<String> = []
    var waiting = Array(targets[target] ?? [])
    while let next = waiting.popLast() {
      guard seen.insert(next).inserted else { continue }
      waiting.append(contentsOf: targets[next] ?? [])
    }
    return seen
  }

  /// Every rule the doc states that the code breaks, one line each.
  func violations(
    manifest: String, sources: [String: [(file: String, text: String)]],
    tests: [String: [(file: String, text: String)]]
  ) -> [String] {
    var found: [String] = []
    for target in sources.keys.sorted() where allowed[target] == nil {
      found.append("Sources/\(target) has no row in docs/ARCHITECTURE.md")
    }
    for target in allowed.keys.sorted() where sources[target] == nil {
      found.append("docs/ARCHITECTURE.md names \(target), which is not in Sources/")
    }
    for (target, files) in sources {
      let may = allowed[target] ?? []
      for (file, text) in files {
        let (modules, callsGlibc) = Self.imports(in: text)
        for module in modules.subtracting(may).sorted() { found.append("\(file) imports \(module)") }
        if callsGlibc, !may.contains("Glibc") { found.append("\(file) calls Glibc") }
      }
    }
    for (target, files) in tests {
      let may = allowedInTest(target)
      for (file, text) in files {
        for module in Self.imports(in: text).modules.subtracting(may).sorted() {
          found.append("\(file) imports \(module)")
        }
      }
    }
    let manifestTargets = Self.packageTargets(manifest)
    for linked in Self.linked(by: "otad", in: manifestTargets).sorted()
    where Self.isTestingTarget(linked) && manifestTargets[linked] != nil {
      found.append("Package.swift: otad links the testing target \(linked)")
    }
    for (target, dependencies) in manifestTargets {
      let may = allowed[target] ?? (tests[target] != nil ? allowedInTest(target) : [])
      for dependency in dependencies.subtracting(may).sorted() {
        found.append("Package.swift: \(target) depends on \(dependency)")
      }
    }
    found += Self.undeclared(manifestTargets, sources: sources)
    return found.sorted()
  }

  /// A source target declares what it imports of the package (a target, or a product some target
  /// names), and imports what it declares: a module reached only through another target's
  /// dependencies builds by luck, and one declared and never imported is a dependency in name only.
  static func undeclared(_ manifest: [String: Set<String>], sources: [String: [(file: String, text: String)]])
    -> [String]
  {
    let packageModules = Set(manifest.keys).union(manifest.values.joined())
    var found: [String] = []
    for (target, files) in sources {
      guard let declared = manifest[target] else { continue }
      var imported: Set<String> = []
      for (file, text) in files {
        let modules = imports(in: text).modules.intersection(packageModules).subtracting([target])
        imported.formUnion(modules)
        for module in modules.subtracting(declared).sorted() {
          found.append("\(file) imports \(module), which Package.swift does not give \(target)")
        }
      }
      for dependency in declared.subtracting(imported).sorted() {
        found.append("Package.swift: \(target) depends on \(dependency) and imports it nowhere")
      }
    }
    return found
  }
}
