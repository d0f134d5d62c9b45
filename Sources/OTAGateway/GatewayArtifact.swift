import Crypto
import OTAWire

/// A downloaded `.swu` opened for one device: the MCUboot image of the device's board and hardware
/// revision, its SHA-256 checked against sw-description's, its version the same as the software's.
public struct GatewayArtifact: Sendable {
  public let description: SWDescription
  private let archive: SWUArchive

  /// Reads the archive and its sw-description.
  public init(bytes: [UInt8]) throws(GatewayRefusal) {
    do {
      archive = try SWUArchive(bytes: bytes)
    } catch {
      throw .format("not an SWUpdate archive: \(error)")
    }
    guard let text = String(validating: archive.members[0].bytes, as: UTF8.self) else {
      throw .format("sw-description is not UTF-8 text")
    }
    do {
      description = try SWDescription(text: text)
    } catch {
      throw .format(error.description)
    }
    guard Version(text: description.version) != nil else {
      throw .format("software.version '\(description.version.prefix(40))' is no MCUboot version (1.2.3+4)")
    }
  }

  /// The image for a device of `model` and `revision`, checked.
  public func image(model: String, revision: String) throws(GatewayRefusal) -> (
    bytes: [UInt8], version: Version
  ) {
    guard let target = description.target(model: model, revision: revision) else {
      throw .hardware(
        "it is for \(description.hardwareText); this device is \(model) revision \(revision)")
    }
    let ours = target.images.filter { $0.type == SWDescription.imageType }
    guard ours.count == 1, let image = ours.first else {
      throw .format(
        "the \(target.board) section has \(ours.count) images of type \(SWDescription.imageType), not one")
    }
    guard let member = archive.member(named: image.filename) else {
      throw .format("sw-description names \(image.filename), which the archive does not hold")
    }
    guard let expected = image.sha256?.lowercased() else {
      throw .format("sw-description gives \(image.filename) no sha256")
    }
    let actual = Hex.string(SHA256.hash(data: member.bytes))
    guard actual == expected else {
      throw .format("\(image.filename) has SHA-256 \(actual), sw-description says \(expected)")
    }
    var reader = ByteReader(member.bytes)
    let header: MCUbootHeader
    do {
      header = try MCUbootHeader(from: &reader)
    } catch {
      throw .format("\(image.filename) is no MCUboot image: \(error)")
    }
    let version = Version(text: description.version)
    guard header.version == version else {
      throw .format(
        "\(image.filename) is version \(header.version), sw-description says \(description.version)")
    }
    return (member.bytes, header.version)
  }
}
