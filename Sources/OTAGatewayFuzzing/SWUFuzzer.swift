import Crypto
import OTAFuzzing
import OTAGateway
import OTAWire

/// The `swu` fuzz target: what the gateway reads from a downloaded `.swu`. The first byte picks how
/// the rest is read:
/// - as an archive, byte for byte, for `SWUArchive(bytes:)` and `GatewayArtifact(bytes:)`;
/// - as a sw-description text (its length in two bytes first) and an image: the text's `@sha256@`
///   is replaced by the image's SHA-256 and both are written as an archive (sw-description, then
///   `fw.bin`), so that fuzzed descriptions reach the image checks, which a mutated hash never passes.
/// Invariants: nothing traps; an archive that reads lies in the input as its own cpio layout says,
/// writes back to bytes that read to an equal archive, and a refusal names a place in the input; an
/// artifact that opens gives each board the image sw-description names, with its SHA-256 and version.
public enum SWUFuzzer {
  public static func check(_ input: [UInt8]) -> [InvariantViolation] {
    guard let selector = input.first else { return [] }
    let rest = Array(input.dropFirst())
    let archive = selector % 2 == 0 ? rest : built(rest)
    return SWUArchiveChecks.read(archive) + GatewayArtifactChecks.open(archive)
  }

  /// Mode 1's archive: a sw-description of `u16 % 2048` bytes, then the image.
  static func built(_ bytes: [UInt8]) -> [UInt8] {
    var input = FuzzInput(bytes)
    let text = input.bytes(Int(input.u16()) % 2048)
    let image = input.rest()
    let sha256 = Hex.string(SHA256.hash(data: image))
    let description = String(decoding: text, as: UTF8.self).replacingAll("@sha256@", with: sha256)
    return SWUArchive(members: [
      .init(name: SWUArchive.descriptionName, bytes: Array(description.utf8)),
      .init(name: "fw.bin", bytes: image),
    ]).bytes()
  }

  /// How many (board, revision) pairs of an input's artifact open to an image: lets the tests show
  /// that the seeds reach the image checks.
  public static func openedImages(_ input: [UInt8]) -> Int {
    guard let selector = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    return GatewayArtifactChecks.openedImages(selector % 2 == 0 ? rest : built(rest))
  }
}

extension String {
  /// Every occurrence of `marker` replaced (Foundation's replacingOccurrences without Foundation).
  func replacingAll(_ marker: String, with replacement: String) -> String {
    split(separator: marker, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
