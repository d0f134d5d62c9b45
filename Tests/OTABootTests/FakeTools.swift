import Foundation
import OTABoot

/// Fake `fw_printenv`, `fw_setenv` and `grub-editenv` in `<directory>/bin`, written at run time. The
/// U-Boot environment lives in `<directory>/fw_env` as NAME=value lines; every invocation appends
/// its argv (arguments with spaces in single quotes) and, for `fw_setenv --script -`, each stdin line
/// indented by two spaces, to `<directory>/log`. Both U-Boot tools take `-c FILE` first, as
/// libubootenv's do, and the script is read as libubootenv 0.3.2 reads it: `NAME=value` sets, `NAME=`
/// deletes, and a line without `=` (the older `NAME value` format) is skipped without a word. A file `<directory>/fail-<tool>` makes that tool
/// print the file to stderr and exit 1.
struct FakeTools {
  let directory: String
  var bin: String { directory + "/bin" }
  var logFile: String { directory + "/log" }
  var ubootEnvironmentFile: String { directory + "/fw_env" }

  /// The tools first, then the system's directories for the shell utilities the scripts use.
  var runner: ToolRunner { ToolRunner(searchPath: bin + ":/usr/bin:/bin") }

  init(in directory: String) throws {
    self.directory = directory
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    try install("fw_printenv", Self.fwPrintenv)
    try install("fw_setenv", Self.fwSetenv)
    try install("grub-editenv", Self.grubEditenv)
  }

  /// Writes an executable script `name` into `bin`, with `@DIR@` replaced by the directory.
  func install(_ name: String, _ script: String) throws {
    let path = bin + "/" + name
    try script.replacingOccurrences(of: "@DIR@", with: directory).write(
      toFile: path, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
  }

  /// The logged lines since the last `clearLog`.
  func log() -> [String] {
    guard let text = try? String(contentsOfFile: logFile, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").map(String.init)
  }

  func clearLog() { try? FileManager.default.removeItem(atPath: logFile) }

  /// The fake U-Boot environment.
  func ubootEnvironment() throws -> [String: String] {
    try variables(in: ubootEnvironmentFile)
  }

  func setUBootEnvironment(_ variables: [String: String]) throws {
    try write(variables, to: ubootEnvironmentFile)
  }

  /// Makes `tool` fail with `message` on stderr (nil: work again).
  func makeFail(_ tool: String, with message: String?) throws {
    let path = directory + "/fail-" + tool
    if let message {
      try (message + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    } else {
      try FileManager.default.removeItem(atPath: path)
    }
  }

  /// NAME=value lines of a file (comments skipped), as a dictionary.
  func variables(in path: String) throws -> [String: String] {
    guard FileManager.default.fileExists(atPath: path) else { return [:] }
    var variables: [String: String] = [:]
    for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    where !line.hasPrefix("#") {
      let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      variables[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
    }
    return variables
  }

  func write(_ variables: [String: String], to path: String) throws {
    let text = variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
    try text.write(toFile: path, atomically: true, encoding: .utf8)
  }

  private static let logArguments = """
    log_invocation() {
      { printf '%s' "$0" | sed 's|.*/||'
        for a in "$@"; do case "$a" in *' '*) printf " '%s'" "$a" ;; *) printf ' %s' "$a" ;; esac; done
        echo; } >> "$dir/log"
      name=$(printf '%s' "$0" | sed 's|.*/||')
      if [ -f "$dir/fail-$name" ]; then cat "$dir/fail-$name" >&2; exit 1; fi
    }
    """

  static let fwPrintenv = """
    #!/bin/sh
    dir='@DIR@'
    \(logArguments)
    log_invocation "$@"
    touch "$dir/fw_env"
    if [ "$1" = "-c" ]; then shift 2; fi
    if [ $# -eq 0 ]; then cat "$dir/fw_env"; exit 0; fi
    status=0
    for name in "$@"; do
      if line=$(grep "^$name=" "$dir/fw_env"); then echo "$line"; else
        echo "## Error: \\"$name\\" not defined" >&2; status=1; fi
    done
    exit $status
    """

  static let fwSetenv = """
    #!/bin/sh
    dir='@DIR@'
    \(logArguments)
    log_invocation "$@"
    touch "$dir/fw_env"
    set_variable() {
      grep -v "^$1=" "$dir/fw_env" > "$dir/fw_env.new"
      if [ $# -gt 1 ]; then printf '%s=%s\\n' "$1" "$2" >> "$dir/fw_env.new"; fi
      mv "$dir/fw_env.new" "$dir/fw_env"
    }
    if [ "$1" = "-c" ]; then shift 2; fi
    if [ "$1" = "--script" ] || [ "$1" = "-s" ]; then
      [ "$2" = "-" ] || { echo "this fake fw_setenv reads scripts from stdin only" >&2; exit 2; }
      while IFS= read -r line || [ -n "$line" ]; do
        printf '  %s\\n' "$line" >> "$dir/log"
        case "$line" in '#'* | *=*) ;; *) continue ;; esac
        case "$line" in '#'*) continue ;; esac
        name=${line%%=*}
        value=${line#*=}
        if [ -n "$value" ]; then set_variable "$name" "$value"; else set_variable "$name"; fi
      done
    else
      name=$1
      shift
      if [ $# -gt 0 ]; then set_variable "$name" "$*"; else set_variable "$name"; fi
    fi
    """

  static let grubEditenv = """
    #!/bin/sh
    dir='@DIR@'
    \(logArguments)
    log_invocation "$@"
    file=$1
    command=$2
    shift 2
    [ -f "$file" ] || printf '# GRUB Environment Block\\n' > "$file"
    # As the real one for the damage a power cut leaves: a block cut to 0 bytes or zeroed is
    # invalid, until `create` (the real one also checks the header this fake does not write).
    if [ "$command" != create ] && { [ ! -s "$file" ] || [ "$(head -c 1 "$file" | od -An -tx1 | tr -d ' ')" = 00 ]; }; then
      echo "grub-editenv: error: invalid environment block." >&2; exit 1
    fi
    case "$command" in
      create) printf '# GRUB Environment Block\\n' > "$file" ;;
      list) grep -v '^#' "$file" || true ;;
      set)
        for assignment in "$@"; do
          name=${assignment%%=*}
          grep -v "^$name=" "$file" > "$file.new"
          printf '%s\\n' "$assignment" >> "$file.new"
          mv "$file.new" "$file"
        done ;;
      unset)
        for name in "$@"; do grep -v "^$name=" "$file" > "$file.new"; mv "$file.new" "$file"; done ;;
      *) echo "grub-editenv: error: unknown command \\`$command'." >&2; exit 1 ;;
    esac
    """
}

/// The inode number and modification time of the file or link at `path` (not following a link): both
/// unchanged means nothing was written or replaced.
func identity(of path: String) throws -> (inode: UInt64, modified: Date) {
  let attributes = try FileManager.default.attributesOfItem(atPath: path)
  return (
    (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0,
    attributes[.modificationDate] as? Date ?? .distantPast
  )
}

/// Writes `text` to `path`.
func writeText(_ text: String, to path: String) throws {
  try text.write(toFile: path, atomically: false, encoding: .utf8)
}
