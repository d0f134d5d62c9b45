import Foundation
import OTAFuzzing
import OTAGateway

/// What the gateway's readings of DDI answers must satisfy.
public enum DDIChecks {
  /// Decoded, encoded, decoded again: equal.
  static func roundTrip<Answer: Codable & Equatable>(_ type: Answer.Type, _ bytes: [UInt8])
    -> [InvariantViolation]
  {
    guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(bytes)) else { return [] }
    return roundTrip(answer)
  }

  static func roundTrip<Answer: Codable & Equatable>(_ answer: Answer) -> [InvariantViolation] {
    do {
      let again = try JSONDecoder().decode(Answer.self, from: JSONEncoder().encode(answer))
      guard again == answer else {
        return [InvariantViolation("json round trip", "\(answer) decodes back as \(again)")]
      }
      return []
    } catch {
      return [InvariantViolation("json round trip", "\(answer) does not encode and decode: \(error)")]
    }
  }

  static func controllerBase(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let base = try? JSONDecoder().decode(DDIControllerBase.self, from: Data(bytes)) else { return [] }
    var found = roundTrip(base)
    let sleep = base.config?.polling?.sleep
    if base.pollingInterval != sleep.flatMap(DDIPollingInterval.parse) {
      found.append(
        InvariantViolation(
          "polling interval", "\(String(describing: base.pollingInterval)) from \(String(describing: sleep))")
      )
    }
    if let sleep { found += pollingInterval(sleep) }
    return found
  }

  static func deployment(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let base = try? JSONDecoder().decode(DDIDeploymentBase.self, from: Data(bytes)) else { return [] }
    var found = roundTrip(base)
    let secure = try? ArtifactReference.choose(from: base, serverScheme: "https")
    let plain = try? ArtifactReference.choose(from: base, serverScheme: "http")
    if let secure {
      found += reference(secure, in: base, serverScheme: "https")
      if plain != secure {
        found.append(InvariantViolation("scheme", "an HTTPS server's pick \(secure) is not an HTTP server's"))
      }
    }
    if let plain { found += reference(plain, in: base, serverScheme: "http") }
    return found
  }

  /// A chosen artifact: one of the deployment's, its size within bounds, its hash ASCII lowercase
  /// hex of its algorithm's length and the one value every spelling of that algorithm gives (SHA-256
  /// when any is given), its link the artifact's download link on the server's scheme.
  public static func reference(
    _ chosen: ArtifactReference, in base: DDIDeploymentBase, serverScheme: String
  ) -> [InvariantViolation] {
    let artifacts = base.deployment.chunks.flatMap(\.artifacts)
    guard let artifact = artifacts.first(where: { $0.filename == chosen.filename && $0.size == chosen.size })
    else {
      return [
        InvariantViolation(
          "artifact", "\(chosen.filename) (\(chosen.size) bytes) is none of the deployment's")
      ]
    }
    var found: [InvariantViolation] = []
    if chosen.size < 1 || chosen.size > ArtifactReference.maximumSize {
      found.append(InvariantViolation("size", "\(chosen.size) bytes taken"))
    }
    let length = chosen.algorithm == .sha256 ? 64 : 40
    if chosen.hash.utf8.count != length
      || !chosen.hash.utf8.allSatisfy({ Array("0123456789abcdef".utf8).contains($0) })
    {
      found.append(InvariantViolation("hash", "'\(chosen.hash)' is not \(length) lowercase hex digits"))
    }
    let given = artifact.hashes.filter { $0.key.lowercased() == chosen.algorithm.rawValue }.map {
      $0.value.lowercased()
    }
    if Set(given) != [chosen.hash] {
      found.append(
        InvariantViolation(
          "hash", "\(chosen.algorithm) '\(chosen.hash)' taken, the server gives \(given.sorted())"))
    }
    if chosen.algorithm == .sha1, artifact.hashes.keys.contains(where: { $0.lowercased() == "sha256" }) {
      found.append(InvariantViolation("hash", "SHA-1 taken over the SHA-256 given"))
    }
    if chosen.key != "\(chosen.algorithm.rawValue)-\(chosen.hash)" {
      found.append(InvariantViolation("key", "'\(chosen.key)'"))
    }
    let link = (artifact.links["download"] ?? artifact.links["download-http"])?.href
    let lower = chosen.url.lowercased()
    if chosen.url != link
      || !(lower.hasPrefix("https://") || (serverScheme == "http" && lower.hasPrefix("http://")))
    {
      found.append(
        InvariantViolation(
          "link", "\(chosen.url) taken for an \(serverScheme) server (download link: \(link ?? "none"))"))
    }
    return found
  }

  /// A polling interval read is H:M:S, minutes and seconds below 60, and reads back from its own
  /// HH:MM:SS; the gateway's wait is within its bounds.
  public static func pollingInterval(_ text: String) -> [InvariantViolation] {
    guard let interval = DDIPollingInterval.parse(text) else { return [] }
    var found: [InvariantViolation] = []
    let seconds = interval.components.seconds
    if interval < .zero || interval > .seconds(9999 * 3600 + 59 * 60 + 59)
      || interval.components.attoseconds != 0
    {
      found.append(InvariantViolation("polling interval", "'\(text)' read as \(interval)"))
    }
    let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) ?? -1 }
    if parts.count != 3 || parts[1] >= 60 || parts[2] >= 60
      || Int64(parts[0] * 3600 + parts[1] * 60 + parts[2]) != seconds
    {
      found.append(InvariantViolation("polling interval", "'\(text)' read as \(interval)"))
    }
    let written = "\(seconds / 3600):\(seconds / 60 % 60):\(seconds % 60)"
    if DDIPollingInterval.parse(written) != interval {
      found.append(
        InvariantViolation("polling interval", "\(interval) written as '\(written)' reads otherwise"))
    }
    let bounds = Duration.seconds(1)...Duration.seconds(3600)
    if !bounds.contains(DDIPollingInterval.clamped(interval, default: .seconds(60), bounds: bounds)) {
      found.append(InvariantViolation("polling bounds", "\(interval) waited outside \(bounds)"))
    }
    return found
  }
}
