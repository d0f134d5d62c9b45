/// What `--version` says on otad, otactl and ota-lab: the release and the commit of the sources it
/// was built from. The commit comes from the BuildCommit plugin (Sources/BuildCommitPlugin), which runs
/// Scripts/build-commit.sh before each build and rewrites BuildCommit.swift only when it changes.
public enum BlueOTAVersion {
  /// The release these sources make (CHANGELOG.md).
  public static let release = "0.5.0"

  /// The commit, abbreviated; nil when the sources were built outside a git checkout (a tarball,
  /// an export) or git could not say.
  public static var commit: String? { buildCommit }

  /// `otad 0.4.0 (commit 9ad4bd7)`, or `otad 0.4.0 (unknown commit)`.
  public static func line(_ program: String) -> String {
    line(program, release: release, commit: commit)
  }

  public static func line(_ program: String, release: String, commit: String?) -> String {
    "\(program) \(release) (\(commit.map { "commit \($0)" } ?? "unknown commit"))"
  }
}
