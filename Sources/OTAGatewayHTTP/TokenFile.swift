import OTASystem

/// A file holding a token the gateway sends its server: it lets whoever reads it update every
/// device it names, so it is taken only as ssh takes a private key: a regular file owned by the
/// user the gateway runs as (or root), that no group or other user may read or write.
public enum TokenFile {
  public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(String)
    case notRegular(String)
    case foreignOwner(String, owner: UInt32, user: UInt32)
    case openToOthers(String, mode: UInt32)
    case unreadable(String, reason: String)

    public var description: String {
      switch self {
      case .missing(let path): "\(path): no such file"
      case .notRegular(let path): "\(path) is not a regular file"
      case .foreignOwner(let path, let owner, let user):
        "\(path) belongs to user \(owner), and the gateway runs as user \(user): another user could change "
          + "the token; make it yours (chown \(user) \(path)) or root's, and chmod 600 \(path)"
      case .openToOthers(let path, let mode):
        "\(path) can be read or written by others (mode \(String(mode, radix: 8))): run chmod 600 \(path); "
          + "a token there lets anyone who reads it update the devices"
      case .unreadable(let path, let reason): "\(path): cannot read it as text (\(reason))"
      }
    }
  }

  /// What is wrong with a token file of this kind, owner and mode for a gateway running as `user`;
  /// nil when nothing is.
  public static func problem(
    _ path: String, kind: FileKind, owner: UInt32, permissions: UInt32, user: UInt32
  ) -> Problem? {
    guard kind == .regular else { return .notRegular(path) }
    guard owner == user || owner == 0 else { return .foreignOwner(path, owner: owner, user: user) }
    guard permissions & 0o077 == 0 else { return .openToOthers(path, mode: permissions) }
    return nil
  }

  /// The file's text, once its kind, owner and mode pass.
  public static func read(_ path: String, user: UInt32 = ProcessEnvironment.effectiveUserID)
    throws(Problem) -> String
  {
    let found: FileStatus?
    do {
      found = try FileSystem.status(ofPath: path)
    } catch {
      throw .unreadable(path, reason: error.description)
    }
    guard let status = found else { throw .missing(path) }
    if let problem = problem(
      path, kind: status.kind, owner: status.owner, permissions: status.permissions, user: user)
    {
      throw problem
    }
    let bytes: [UInt8]
    do {
      bytes = try FileSystem.readFile(path)
    } catch {
      throw .unreadable(path, reason: error.description)
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw .unreadable(path, reason: "not UTF-8")
    }
    return text
  }
}
