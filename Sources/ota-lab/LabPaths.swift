import Foundation
import OTASystem

/// Where the lab finds the programs it runs (otad, otactl: beside ota-lab) and the sample images,
/// and the temporary folder the device lives in.
struct LabPaths: Sendable {
  let bin: String
  let images: String
  let folder: String
  var bootloader: LabBootloader = .file

  /// Under U-Boot the slots are where the harness's boot-once.py finds them (a.img, b.img).
  var slotA: String { folder + (bootloader == .uboot ? "/a.img" : "/slot-a.img") }
  var slotB: String { folder + (bootloader == .uboot ? "/b.img" : "/slot-b.img") }
  /// otad's configuration file under U-Boot (the boot backend's settings).
  var otadConfiguration: String { folder + "/otad.toml" }
  var state: String { folder + "/state" }
  var socket: String { folder + "/device.sock" }
  var deviceTrace: String { folder + "/otad-trace.json" }
  var deviceLog: String { folder + "/otad.log" }
  /// Where the device's applications put their update locks (`otad run --lock-dir`).
  var lockDirectory: String { folder + "/locks" }
  /// The lock the lab's button holds, in the name of the lab's own process.
  var labLock: String { lockDirectory + "/lab.lock" }
  var otad: String { bin + "/otad" }
  var otactl: String { bin + "/otactl" }
  func image(_ name: String) -> String { images + "/" + name }
  var trustedKey: String { images + "/keys/test-ed25519.pub.pem" }
  /// The device's key for encrypted images: the test X25519 key, copied with mode 0600 (otad refuses
  /// one that others may read).
  var deviceKey: String { folder + "/device.pem" }
  /// Firmware 2.0.0's payload as 2.1.0, signed with the test key and encrypted for the device's key.
  var encryptedImage: String { folder + "/firmware-v2.1-encrypted.bin" }
  var healthCheck: String { "sh " + images + "/firmware/health-check.sh" }

  /// `images` nil: ./Images, else the Images folder of the checkout ota-lab was built in.
  static func make(images: String?, bin: String?, bootloader: LabBootloader = .file) throws -> LabPaths {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    let binDirectory = bin ?? executable.deletingLastPathComponent().path
    let candidates: [String?] = [
      images, FileManager.default.currentDirectoryPath + "/Images",
      executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Images").path,
    ]
    guard
      let found = candidates.compactMap({ $0 }).first(where: {
        FileSystem.exists($0 + "/firmware-v1.bin")
      })
    else { throw LabError("cannot find the sample images (Images/firmware-v1.bin): give --images") }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ota-lab-\(UUID().uuidString)")
      .path
    try FileSystem.makeDirectories(folder)
    return LabPaths(bin: binDirectory, images: found, folder: folder, bootloader: bootloader)
  }
}

struct LabError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
