import Crypto
import OTAFuzzing
import OTAGateway
import OTAWire

/// What an artifact that opens must satisfy: it is an archive that reads, its sw-description holds
/// up (SWDescriptionChecks), and for each board and revision it names, an image handed out is the
/// member sw-description names for the target a device of that board and revision gets, with the
/// SHA-256 sw-description gives and the software's version.
enum GatewayArtifactChecks {
  static func open(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let artifact = try? GatewayArtifact(bytes: bytes) else { return [] }
    guard let archive = try? SWUArchive(bytes: bytes) else {
      return [InvariantViolation("artifact without archive", "opened, but the archive alone is refused")]
    }
    var found = SWDescriptionChecks.check(artifact.description)
    for (board, revision) in devices(artifact.description) {
      guard let opened = try? artifact.image(model: board, revision: revision) else { continue }
      found += image(
        opened, board: board, revision: revision, description: artifact.description, archive: archive)
    }
    return found
  }

  /// One device per board and revision sw-description names ("any" for a board of any revision).
  static func devices(_ description: SWDescription) -> [(board: String, revision: String)] {
    description.targets.flatMap { target in
      (target.revisions.isEmpty ? ["any"] : target.revisions).map { (target.board, $0) }
    }
  }

  static func image(
    _ opened: (bytes: [UInt8], version: Version), board: String, revision: String, description: SWDescription,
    archive: SWUArchive
  ) -> [InvariantViolation] {
    let device = "\(board) \(revision)"
    guard let target = description.target(model: board, revision: revision) else {
      return [InvariantViolation("hardware", "an image for \(device), which no target takes")]
    }
    var found: [InvariantViolation] = []
    if target.board != board || !(target.revisions.isEmpty || target.revisions.contains(revision)) {
      found.append(
        InvariantViolation("hardware", "\(device) got the target \(target.board) \(target.revisions)"))
    }
    let ours = target.images.filter { $0.type == SWDescription.imageType }
    guard ours.count == 1, let named = ours.first else {
      return found + [InvariantViolation("one image", "\(device) got an image of \(ours.count) named")]
    }
    if archive.member(named: named.filename)?.bytes != opened.bytes {
      found.append(InvariantViolation("image member", "\(device) got bytes that are not \(named.filename)'s"))
    }
    if Hex.string(SHA256.hash(data: opened.bytes)) != named.sha256?.lowercased() {
      found.append(
        InvariantViolation(
          "image hash", "\(device) got an image whose SHA-256 is not \(named.sha256 ?? "given")"))
    }
    if Version(text: description.version) != opened.version {
      found.append(
        InvariantViolation(
          "image version", "\(device) got \(opened.version), the software is \(description.version)"))
    }
    return found
  }

  static func openedImages(_ bytes: [UInt8]) -> Int {
    guard let artifact = try? GatewayArtifact(bytes: bytes) else { return 0 }
    return devices(artifact.description).filter {
      (try? artifact.image(model: $0.board, revision: $0.revision)) != nil
    }
    .count
  }
}
