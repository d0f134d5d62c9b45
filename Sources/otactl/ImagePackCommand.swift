import ArgumentParser
import Crypto
import OTAGateway
import OTAWire

/// `image pack`: an MCUboot image wrapped as the SWUpdate file (.swu) an update server takes.
struct ImagePackCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "pack",
    abstract: "Wrap an MCUboot image as an SWUpdate .swu for an update server (goosebit, hawkBit).",
    discussion: """
      The .swu is a cpio archive (newc, with checksums) of sw-description and the image. sw-description
      names the image's version as software.version, the hardware as a board section (--board, the
      model a device reports) with its hardware-compatibility revisions (--revision), and the image
      as type "blueota-mcuboot" with its SHA-256. goosebit reads the version and hardware from it;
      `otactl gateway` checks all of it before it pushes. docs/FLEET.md.

      Example: otactl image pack app-2.0.0.img app-2.0.0.swu --board rpi4 --revision 1.4 --revision 1.5
      """)

  @Argument(help: "The MCUboot image (from `otactl image create` or imgtool).")
  var image: String

  @Argument(help: "Where to write the .swu (replaced if it exists).")
  var output: String

  @Option(help: "The board: the model the devices report (otad's [device] model); 'default' for none.")
  var board = SWDescription.defaultBoard

  @Option(help: "A hardware revision the image is for (give it several times); none: any revision.")
  var revision: [String] = []

  @Option(help: "The description line of sw-description.")
  var description = "BlueOTA: an MCUboot image for otad"

  func validate() throws {
    for name in [board] + revision {
      guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "\"" })
      else {
        throw ValidationError(
          "'\(name)': a board or revision is 1 to 64 ASCII characters, no spaces or quotes")
      }
    }
    guard let first = board.first, first.isLetter,
      board.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    else {
      throw ValidationError("--board \(board): a libconfig name (a letter, then letters, digits, '-' or '_')")
    }
  }

  func run() throws {
    let bytes: [UInt8]
    do {
      bytes = try ImageFiles.read(image, what: "image")
    } catch {
      throw ImageCommandExit.fail("pack", error.message, .imageUnusable)
    }
    var reader = ByteReader(bytes)
    guard let header = try? MCUbootHeader(from: &reader) else {
      throw ImageCommandExit.fail(
        "pack", "\(image) is not an MCUboot image (make one with `otactl image create`)", .imageUnusable)
    }
    let name = "firmware-\(header.version).mcuboot.bin"
    let sha256 = Hex.string(SHA256.hash(data: bytes))
    let swDescription = SWDescription(
      version: "\(header.version)",
      targets: [
        .init(
          board: board, revisions: revision,
          images: [.init(filename: name, type: SWDescription.imageType, sha256: sha256)])
      ])
    let archive = SWUArchive(members: [
      .init(
        name: SWUArchive.descriptionName, bytes: Array(swDescription.text(description: description).utf8)),
      .init(name: name, bytes: bytes),
    ])
    let out = archive.bytes()
    do {
      try ImageFiles.writeImage(out, to: output)
    } catch {
      throw ImageCommandExit.fail("pack", error.message, .cannotWrite)
    }
    print(
      "\(output): SWUpdate file, version \(header.version), for \(swDescription.hardwareText), \(out.count) bytes "
        + "(image \(bytes.count) bytes, sha256 \(sha256.prefix(16))…)")
  }
}
