/// The part of an SWUpdate `sw-description` the gateway reads and `otactl image pack` writes: the
/// software's version, and per board (SWUpdate's board-specific sections, `software.<board>`, or
/// `software` itself for the board "default") the hardware revisions it is for and its images.
/// The image otad takes is the one of type `blueota-mcuboot`, with its SHA-256.
public struct SWDescription: Equatable, Sendable {
  public struct Image: Equatable, Sendable {
    public var filename: String
    public var type: String?
    public var sha256: String?
    public init(filename: String, type: String?, sha256: String?) {
      self.filename = filename
      self.type = type
      self.sha256 = sha256
    }
  }
  public struct Target: Equatable, Sendable {
    /// The board's name as the device reports its model; "default" for `software` itself.
    public var board: String
    /// The hardware revisions it is for (`hardware-compatibility`); empty: any.
    public var revisions: [String]
    public var images: [Image]
    public init(board: String, revisions: [String], images: [Image]) {
      self.board = board
      self.revisions = revisions
      self.images = images
    }
  }

  public static let imageType = "blueota-mcuboot"
  public static let defaultBoard = "default"

  public var version: String
  public var targets: [Target]

  public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
  }

  public init(text: String) throws(Failure) {
    let root: LibconfigValue
    do {
      root = try LibconfigParser.parse(text)
    } catch {
      throw Failure("sw-description is not libconfig: \(error)")
    }
    guard let software = root["software"], let settings = software.settings else {
      throw Failure("sw-description has no 'software' group")
    }
    guard let version = software["version"]?.string, !version.isEmpty else {
      throw Failure("sw-description has no software.version string")
    }
    self.version = version
    var targets: [Target] = []
    if let target = try Self.target(Self.defaultBoard, software, where: "software") { targets.append(target) }
    for (name, value) in settings where value.settings != nil {
      if let target = try Self.target(name, value, where: "software.\(name)") { targets.append(target) }
      for (inner, nested) in value.settings ?? [] where nested.settings != nil {
        if let target = try Self.target(name, nested, where: "software.\(name).\(inner)") {
          targets.append(target)
        }
      }
    }
    self.targets = targets
  }

  public init(version: String, targets: [Target]) {
    self.version = version
    self.targets = targets
  }

  /// A section with images or hardware-compatibility is a target for `board`.
  static func target(_ board: String, _ section: LibconfigValue, where path: String) throws(Failure)
    -> Target?
  {
    let compatibility = section["hardware-compatibility"]
    let images = section["images"]
    guard compatibility != nil || images != nil else { return nil }
    var revisions: [String] = []
    if let compatibility {
      guard let elements = compatibility.elements else {
        throw Failure("\(path).hardware-compatibility is not an array of strings")
      }
      for element in elements {
        guard let revision = element.string else {
          throw Failure("\(path).hardware-compatibility holds a value that is not a string")
        }
        revisions.append(revision)
      }
    }
    var list: [Image] = []
    for element in images?.elements ?? [] {
      guard let filename = element["filename"]?.string else {
        throw Failure("an image in \(path).images has no filename")
      }
      list.append(Image(filename: filename, type: element["type"]?.string, sha256: element["sha256"]?.string))
    }
    return Target(board: board, revisions: revisions, images: list)
  }

  /// The target for a device of this model and hardware revision, or nil.
  public func target(model: String, revision: String) -> Target? {
    targets.first { $0.board == model && ($0.revisions.isEmpty || $0.revisions.contains(revision)) }
  }

  /// What the artifact is for, as a person reads it: "blueota-sim 1.0, rpi4 1.2 or 1.4".
  public var hardwareText: String {
    targets.map { target in
      target.revisions.isEmpty
        ? "\(target.board) (any revision)"
        : "\(target.board) \(target.revisions.joined(separator: " or "))"
    }.joined(separator: ", ")
  }

  /// The text: one board section per target (or `software` itself for "default"), each with its
  /// one image.
  public func text(description: String) -> String {
    var out = "software =\n{\n  version = \(Self.quoted(version));\n"
    out += "  description = \(Self.quoted(description));\n"
    for target in targets {
      let indent = target.board == Self.defaultBoard ? "  " : "    "
      if target.board != Self.defaultBoard { out += "  \(target.board) =\n  {\n" }
      if !target.revisions.isEmpty {
        out +=
          "\(indent)hardware-compatibility = [ \(target.revisions.map(Self.quoted).joined(separator: ", ")) ];\n"
      }
      out += "\(indent)images: (\n"
      out += target.images.map { image in
        var fields = ["filename = \(Self.quoted(image.filename));"]
        if let type = image.type { fields.append("type = \(Self.quoted(type));") }
        if let sha256 = image.sha256 { fields.append("sha256 = \(Self.quoted(sha256));") }
        return "\(indent)  {\n" + fields.map { "\(indent)    \($0)\n" }.joined() + "\(indent)  }"
      }.joined(separator: ",\n")
      out += "\n\(indent));\n"
      if target.board != Self.defaultBoard { out += "  };\n" }
    }
    return out + "};\n"
  }

  /// A libconfig string that reads back as `text`: `\\` and `\"` escaped, and every control
  /// character as libconfig's `\n`, `\t`, `\r`, `\f` or `\xNN` (a raw newline ends the string's
  /// line, which the parser refuses, so a filename read with `\n` was written into text that did
  /// not read).
  public static func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": out += "\\\\"
      case "\"": out += "\\\""
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      case "\u{0C}": out += "\\f"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        let hex = String(scalar.value, radix: 16, uppercase: true)
        out += "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}
