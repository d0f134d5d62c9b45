import ArgumentParser
import OTAGatewayHTTP

/// The gateway's tokens, read from files only their owner can read: a token lets whoever holds it
/// update every device it names, so a file others can read or another user owns is refused, as ssh
/// refuses such a key (`TokenFile`).
enum GatewayCredentials {
  /// `--token-file` (hawkBit's gateway token) or `--target-tokens` (one `controllerId token` per
  /// line), or no authorization.
  static func read(tokenFile: String?, targetTokens: String?) throws -> DDIAuthorization {
    switch (tokenFile, targetTokens) {
    case (nil, nil): return .none
    case (let path?, nil):
      let token = try text(path, "--token-file").trimmingCharacters(in: .whitespacesAndNewlines)
      guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
        throw ValidationError("--token-file \(path): the file must hold the gateway token alone, on one line")
      }
      return .gateway(token)
    case (nil, let path?):
      var tokens: [String: String] = [:]
      for (number, line) in try text(path, "--target-tokens").split(separator: "\n").enumerated() {
        let entry = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let fields = entry.split(whereSeparator: \.isWhitespace)
        if fields.isEmpty { continue }
        guard fields.count == 2 else {
          throw ValidationError(
            "--target-tokens \(path) line \(number + 1): give a controller id and its token")
        }
        tokens[String(fields[0])] = String(fields[1])
      }
      guard !tokens.isEmpty else {
        throw ValidationError("--target-tokens \(path): the file names no target")
      }
      return .targets(tokens)
    case (_?, _?):
      throw ValidationError(
        "give --token-file (one gateway token) or --target-tokens (one per target), not both")
    }
  }

  private static func text(_ path: String, _ option: String) throws -> String {
    do {
      return try TokenFile.read(path)
    } catch {
      throw ValidationError("\(option) \(error)")
    }
  }
}
