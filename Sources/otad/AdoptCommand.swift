import ArgumentParser
import OTABoot
import OTAWire

struct AdoptCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "adopt",
    abstract: "Record the running slot's bytes, written by hand, as its image: a delta base from then on.",
    discussion: """
      A slot flashed by hand (dd, an SD card written from an image) holds an image otad knows nothing
      about: Info says size 0, and the first update over BLE sends everything. `otad adopt` reads
      the running slot once and records its length, CRC32 and version in the boot state; a central
      whose --base is the same bytes then sends the next release as a delta. The Raspberry Pi kit
      runs it at install. The whole slot is adopted unless --length gives the image's own length
      (the partition may be larger than the image written to it). Nothing is written but the boot
      state; a running otad is told (SIGHUP).
      """)

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Images") var images: ImageOptions

  @Option(help: "The image's length in bytes (default: the whole running slot).")
  var length: UInt64?

  @Option(
    name: .customLong("image-version"), help: "The version it runs, like 1.2.3 (default: the recorded one).")
  var imageVersion: String?

  @Flag(help: "Record it again even when the boot state knows an image there (after a reflash by hand).")
  var force = false

  func run() throws {
    var version: Version?
    if let imageVersion {
      guard let parsed = Version(text: imageVersion) else {
        throw ValidationError("--image-version \(imageVersion) is not a version like 1.2.3")
      }
      version = parsed
    }
    let daemon = try DaemonSetup.daemon(try storage.configuration(images))
    let adopted: RunningImageAdoption.Adopted
    do {
      adopted = try RunningImageAdoption.adopt(
        control: daemon.control, slots: daemon.storage.slots, length: length, version: version, force: force)
    } catch {
      throw ValidationError("cannot adopt the running slot: \(error)")
    }
    let crc = String(adopted.crc32, radix: 16, uppercase: false)
    if adopted.alreadyKnown {
      print(
        "slot \(adopted.slot) already holds a known image: \(adopted.length) bytes, CRC32 \(crc), "
          + "firmware \(adopted.version) (--force records the slot's bytes again)")
      return
    }
    print(
      "slot \(adopted.slot) adopted: \(adopted.length) bytes, CRC32 \(crc), firmware \(adopted.version); "
        + "a central whose --base is these bytes sends the next release as a delta")
    print("  SHA-256 \(Hex.string(adopted.sha256)) (sha256sum of the --base file must say the same)")
    if PidFile(directory: daemon.layout.stateDirectory).signalReload() { print("told the running otad") }
  }
}
