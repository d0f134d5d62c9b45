import OTAFuzzing
import OTAGateway

/// What an archive that reads must satisfy: its members are the input's own cpio members, at the
/// places the input's headers say, and it writes back to bytes that read to an equal archive. A
/// header refused is one inside the input.
public enum SWUArchiveChecks {
  static func read(_ bytes: [UInt8]) -> [InvariantViolation] {
    let archive: SWUArchive
    do {
      archive = try SWUArchive(bytes: bytes)
    } catch {
      return refusal(error, inputCount: bytes.count)
    }
    return layout(archive, of: bytes) + roundTrip(archive)
  }

  /// The members are the walk's entries before the trailer: same names, byte for byte (C strings:
  /// no NUL inside), and the same bytes as the input holds in each member's range.
  public static func layout(_ archive: SWUArchive, of bytes: [UInt8]) -> [InvariantViolation] {
    guard let entries = SWUArchiveWalk.entries(bytes) else {
      return [InvariantViolation("layout", "read, but its headers do not walk to a trailer inside the input")]
    }
    let members = entries.dropLast()
    guard members.count == archive.members.count else {
      return [
        InvariantViolation("layout", "\(archive.members.count) members read, \(members.count) in the input")
      ]
    }
    var found: [InvariantViolation] = []
    for (index, (member, entry)) in zip(archive.members, members).enumerated() {
      if Array(member.name.utf8) != entry.name || entry.name.contains(0) {
        found.append(
          InvariantViolation(
            "member name", "member \(index) read as '\(member.name)', stored as \(entry.name)"))
      }
      if entry.data.upperBound > bytes.count || member.bytes != Array(bytes[entry.data]) {
        found.append(
          InvariantViolation(
            "member range", "member \(index) '\(member.name)' is not the input's \(entry.data)"))
      }
      if bytes[entry.header + 5] == UInt8(ascii: "2"),
        entry.checksum != member.bytes.reduce(0, { $0 &+ UInt32($1) })
      {
        found.append(
          InvariantViolation("checksum", "member \(index) '\(member.name)' read despite its 070702 sum"))
      }
    }
    if archive.members.first?.name != SWUArchive.descriptionName {
      found.append(
        InvariantViolation(
          "sw-description first", "the first member is \(archive.members.first?.name ?? "none")"))
    }
    return found
  }

  /// Written, read again: equal; written again: the same bytes.
  public static func roundTrip(_ archive: SWUArchive) -> [InvariantViolation] {
    let written = archive.bytes()
    let again: SWUArchive
    do {
      again = try SWUArchive(bytes: written)
    } catch {
      return [InvariantViolation("round trip", "what it writes is refused: \(error)")]
    }
    if again != archive {
      return [
        InvariantViolation(
          "round trip", "reads back as \(again.members.map(\.name)), not \(archive.members.map(\.name))")
      ]
    }
    if again.bytes() != written {
      return [InvariantViolation("canonical", "written twice, two different archives")]
    }
    return []
  }

  /// A header refused for its magic or a field is a whole header inside the input.
  static func refusal(_ failure: SWUArchive.Failure, inputCount: Int) -> [InvariantViolation] {
    switch failure {
    case .badMagic(let offset), .badField(_, let offset):
      guard offset < 0 || offset + 110 > inputCount else { return [] }
      return [InvariantViolation("refusal place", "\(failure) for an input of \(inputCount) bytes")]
    default: return []
    }
  }
}
