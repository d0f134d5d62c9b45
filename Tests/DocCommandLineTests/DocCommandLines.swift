import Foundation

/// The command lines of otad, otactl and ota-lab that the docs show in their fenced code blocks,
/// split into words as a shell would, with what is not the program's (a prompt, `sudo`, a comment,
/// a pipe or redirection, the rest of a `&&` list) cut off.
struct DocCommandLine: CustomStringConvertible, Sendable {
  var file: String
  var line: Int
  var program: String
  var arguments: [String]
  var description: String { "\(file):\(line): \(program) \(arguments.joined(separator: " "))" }

  static let programs = ["otad", "otactl", "ota-lab"]

  /// Every such line of `text` (a Markdown file named `file`), and the lines skipped with the reason.
  static func lines(in text: String, file: String) -> (lines: [DocCommandLine], skipped: [(String, String)]) {
    var found: [DocCommandLine] = []
    var skipped: [(String, String)] = []
    var inFence = false
    var shellFence = false
    var pending = ""
    var pendingLine = 0
    for (index, raw) in text.components(separatedBy: "\n").enumerated() {
      let trimmed = raw.trimmingCharacters(in: .whitespaces)
      if trimmed.hasPrefix("```") {
        inFence.toggle()
        // A fence of another language (toml, ini, json) holds no command lines.
        shellFence = ["", "sh", "bash", "shell", "console"].contains(String(trimmed.dropFirst(3)))
        pending = ""
        continue
      }
      guard inFence, shellFence else { continue }
      // A diagram (box-drawing characters, arrows) is no command line even where it names one.
      guard !trimmed.unicodeScalars.contains(where: { (0x2500...0x25FF).contains($0.value) }) else {
        continue
      }
      if pending.isEmpty { pendingLine = index + 1 }
      // A line ending in a backslash goes on on the next one.
      if trimmed.hasSuffix("\\") {
        pending += String(trimmed.dropLast()) + " "
        continue
      }
      let whole = pending + trimmed
      pending = ""
      guard let words = ShellWords.split(whole) else { continue }
      // Each command of a list (`swift build && .build/debug/ota-lab`, `a | b`).
      for segment in words.split(whereSeparator: { ["&&", "||", ";", "|"].contains($0) }) {
        guard let command = command(in: Array(segment)) else { continue }
        let text = "\(file):\(pendingLine): \(command.program) \(command.arguments.joined(separator: " "))"
        if let reason = placeholder(in: command.arguments) {
          skipped.append((text, reason))
          continue
        }
        found.append(
          DocCommandLine(
            file: file, line: pendingLine, program: command.program, arguments: command.arguments))
      }
    }
    return (found, skipped)
  }

  /// The program and its arguments when `words` run otad, otactl or ota-lab: by name or by a path
  /// that ends in the name (`.build/debug/otactl`, `/usr/local/bin/otad`), after a `$ ` prompt,
  /// `sudo` and `NAME=value` settings.
  static func command(in words: [String]) -> (program: String, arguments: [String])? {
    var rest = words[...]
    while let first = rest.first, first == "$" || first == "sudo" || isAssignment(first) {
      rest = rest.dropFirst()
    }
    guard let first = rest.first else { return nil }
    let name = first.split(separator: "/").last.map(String.init) ?? first
    guard programs.contains(name), first == name || first.contains("/") else { return nil }
    var arguments: [String] = []
    for word in rest.dropFirst() {
      if ShellWords.endsCommand(word) { break }
      arguments.append(word)
    }
    return (name, arguments)
  }

  static func isAssignment(_ word: String) -> Bool {
    guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return false }
    return word[..<equals].allSatisfy { $0.isUppercase || $0 == "_" || $0.isNumber }
  }

  /// Why a line is not a command line but its synopsis: it elides (`...`, `…`), or a word has
  /// square brackets (an optional part: `[--json]`, `1.2.3[+4]`), angle brackets (`<file>`) or a
  /// bar (a choice: `hash|full`). Upper-case placeholders (FILE, PORT) are values like any other
  /// and are parsed: one where a number must be fails.
  static func placeholder(in arguments: [String]) -> String? {
    for word in arguments {
      if word.contains("...") || word.contains("…") { return "elided (\(word))" }
      if word.hasPrefix("<") && word.hasSuffix(">") { return "a placeholder (\(word))" }
      if word.contains("[") || word.contains("]") { return "an optional part (\(word))" }
      if word.contains("|") { return "a choice (\(word))" }
    }
    return nil
  }
}

/// Splitting a line into words as sh does, for the docs' command lines: quotes, backslashes,
/// comments; nil for what is not one line of a command (an open quote).
enum ShellWords {
  static func split(_ line: String) -> [String]? {
    var words: [String] = []
    var word = ""
    var inWord = false
    var quote: Character?
    var escaped = false
    for character in line {
      if escaped {
        word.append(character)
        escaped = false
        continue
      }
      if let open = quote {
        if character == open {
          quote = nil
        } else if character == "\\" && open == "\"" {
          escaped = true
        } else {
          word.append(character)
        }
        continue
      }
      switch character {
      case "\\": escaped = true; inWord = true
      case "'", "\"": quote = character; inWord = true
      case "#" where !inWord: return words
      case " ", "\t":
        if inWord { words.append(word) }
        word = ""
        inWord = false
      default:
        word.append(character)
        inWord = true
      }
    }
    guard quote == nil else { return nil }
    if inWord { words.append(word) }
    return words
  }

  /// A word that ends the command: a pipe, a list, a redirection, a background `&`.
  static func endsCommand(_ word: String) -> Bool {
    if word.hasPrefix("<") && word.hasSuffix(">") { return false }  // a <placeholder>
    return ["|", "||", "&&", ";", "&"].contains(word) || word.hasPrefix(">") || word.hasPrefix("<")
      || word.hasPrefix("2>") || word.hasPrefix("1>") || word.hasPrefix("&>")
  }
}
