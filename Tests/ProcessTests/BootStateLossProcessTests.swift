import Foundation
import Testing

/// The boot state's files deleted or destroyed under a device that was updated, seen from outside:
/// otad rebuilds the state from its bootloader link and the slots' own images, says so, keeps the
/// good slot running and writes only the other. And rot in the running image is reported.
@Suite(.serialized) struct BootStateLossProcessTests {
  let trial = TrialBootProcessTests()

  /// v2 pushed and confirmed on slot B, then v3 rolled back in slot A: A holds a bad image.
  func updatedDevice() throws -> Daemon {
    let daemon = try trial.device()
    try daemon.start(extra: ["--health-check", TrialBootProcessTests.healthCheck, "--attempts", "1"])
    let toV2 = try trial.push("firmware-v2.bin", to: daemon)
    #expect(toV2.status == 0, "\(toV2.errors)\n\(daemon.log)")
    let toV3 = try trial.push("firmware-v3.bin", to: daemon)
    #expect(toV3.status == 7, "v3 fails its self-test: \(toV3.errors)\n\(daemon.log)")
    #expect(daemon.stop() == 0)
    return daemon
  }

  func stateFile(_ daemon: Daemon, _ name: String) -> URL {
    daemon.folder.appendingPathComponent("state/\(name)")
  }

  @Test(arguments: ["deleted", "zeroed"])
  func aLostBootStateKeepsTheGoodSlotAndTheNextPushWritesTheOther(damage: String) throws {
    // [SEC-ATK-44]
    let daemon = try updatedDevice()
    let v2 = try Data(contentsOf: URL(fileURLWithPath: TrialBootProcessTests.sample("firmware-v2.bin")))
    for name in ["boot.state", "boot.state.copy"] {
      let file = stateFile(daemon, name)
      if damage == "deleted" {
        try FileManager.default.removeItem(at: file)
      } else {
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        try Data(count: size).write(to: file)
      }
    }

    // otad status, before any start: what the daemon will do, and why.
    let text = try runTool("otad", ["status"] + daemon.storageArguments)
    #expect(text.status == 0 && text.output.contains("REBUILT from evidence"), "\(text.output)\(text.errors)")
    #expect(text.output.contains("kept slot B (the bootloader's primary slot)"), "\(text.output)")
    let status = try daemon.status()
    #expect(status.running == "B" && status.confirmed == "B", "\(status)")
    #expect(status.slot("B")?.version == "2.0.0+0")
    #expect(status.slot("A")?.status == "empty", "the rolled-back v3 is not trusted")

    try daemon.start(extra: ["--health-check", TrialBootProcessTests.healthCheck, "--attempts", "1"])
    #expect(daemon.log.contains("boot state rebuilt from evidence"), "\(daemon.log)")
    if damage == "zeroed" {
      #expect(daemon.log.contains("failed its checks; moved aside"), "\(daemon.log)")
      #expect(FileManager.default.fileExists(atPath: stateFile(daemon, "boot.state.damaged").path))
    }
    let link = stateFile(daemon, "current").path
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == daemon.slotB.path)

    // A push lands in slot A; slot B's bytes stay those of v2.
    let pushed = try trial.push("firmware-v3.bin", to: daemon, ["--no-activate"])
    #expect(pushed.status == 0, "\(pushed.errors)\n\(daemon.log)")
    #expect(daemon.slotBytes(daemon.slotB, count: v2.count) == [UInt8](v2))
    let after = try daemon.status()
    #expect(
      after.running == "B" && after.journal?.slot == "A")
    #expect(daemon.stop() == 0)
  }

  @Test func rotInTheRunningImageIsReportedByStatusTheBootStageAndTheHealthCheck() throws {
    // [SEC-ATK-46]
    let daemon = try trial.device()
    // The health check prints what otad told it, and passes.
    let check = "sh -c 'echo \"image-check=$OTAD_IMAGE_CHECK\" >&2'"
    try daemon.start(extra: ["--health-check", check])
    let pushed = try trial.push("firmware-v2.bin", to: daemon)
    #expect(pushed.status == 0, "\(pushed.errors)\n\(daemon.log)")
    #expect(daemon.log.contains("image-check=intact"), "\(daemon.log)")
    #expect(try daemon.status().runningImage == "intact")
    #expect(daemon.stop() == 0)

    // One byte of the confirmed image in slot B changes: its MCUboot magic.
    let handle = try FileHandle(forUpdating: daemon.slotB)
    try handle.seek(toOffset: 0)
    try handle.write(contentsOf: Data([0x00]))
    try handle.close()
    let status = try daemon.status()
    #expect((status.runningImage ?? "").hasPrefix("rotten: slot B"), "\(status)")
    let text = try runTool("otad", ["status"] + daemon.storageArguments)
    #expect(text.output.contains("running image: rotten"), "\(text.output)")
    try daemon.start()
    #expect(
      daemon.log.contains("image check: slot B no longer holds the image installed there"), "\(daemon.log)")
    #expect(daemon.stop() == 0)
  }

  /// v2 confirmed in B, v3 rolled back in A, then both copies of the boot state and the file
  /// backend's primary link lost (an install older than that link): nothing says which slot is good.
  func deviceWithoutEvidence() throws -> Daemon {
    let daemon = try updatedDevice()
    for name in ["boot.state", "boot.state.copy", "current.primary"] {
      try FileManager.default.removeItem(at: stateFile(daemon, name))
    }
    return daemon
  }

  /// The daemon's log once it contains `text`, or after 30 s.
  func log(of daemon: Daemon, containing text: String) -> String {
    let deadline = Date().addingTimeInterval(30)
    while !daemon.log.contains(text), Date() < deadline { usleep(100_000) }
    return daemon.log
  }

  @Test func withoutTheBootloadersPrimaryTheDeviceWritesNothingUntilTheRunningSlotIsConfirmed() throws {
    // [P-PREP-3] [SEC-ATK-44]
    let daemon = try deviceWithoutEvidence()
    // Every health check fails: B (the slot the evidence chose), then A (it holds a verified image,
    // the rolled-back v3), then B again, where the state stays provisional and nothing is written.
    try daemon.start(extra: ["--health-check", "false"])
    let log = log(of: daemon, containing: "stays provisional")
    #expect(log.contains("slot B did not prove itself (the health check failed"), "\(log)")
    #expect(log.contains("trying slot A, which holds a verified image"), "\(log)")
    #expect(log.contains("slot A did not prove itself"), "\(log)")
    #expect(log.contains("stays provisional and updates are refused"), "\(log)")
    #expect(try daemon.status().running == "B", "back on the slot the evidence chose")
    #expect(try daemon.status().provisional == true)
    let info = try runTool("otactl", ["info", "--device", daemon.socket])
    #expect(info.output.contains("boot state: rebuilt"), "\(info.output)")

    let v2 = try Data(contentsOf: URL(fileURLWithPath: TrialBootProcessTests.sample("firmware-v2.bin")))
    let refused = try trial.push("firmware-v3.bin", to: daemon, ["--no-activate"])
    #expect(
      refused.status != 0 && (refused.output + refused.errors).contains("otad mark-good"),
      "\(refused.output)\(refused.errors)")
    #expect(daemon.slotBytes(daemon.slotB, count: v2.count) == [UInt8](v2))

    let marked = try runTool("otad", ["mark-good"] + daemon.storageArguments)
    #expect(
      marked.status == 0 && marked.output.contains("slot B (firmware 2.0.0+0) confirmed"), "\(marked.output)")
    #expect(try daemon.status().provisional == false)
    let pushed = try trial.push("firmware-v3.bin", to: daemon, ["--no-activate"])
    #expect(pushed.status == 0, "\(pushed.errors)\n\(daemon.log)")
    #expect(daemon.slotBytes(daemon.slotB, count: v2.count) == [UInt8](v2))
    #expect(daemon.stop() == 0)
  }

  /// No one at the console: the running slot's health check, as for a trial, confirms the rebuilt
  /// state, which is then saved, and updates go on without `otad mark-good`.
  @Test func aRebuiltStateIsConfirmedByTheRunningSlotsHealthCheck() throws {
    // [P-PREP-3]
    let daemon = try deviceWithoutEvidence()
    try daemon.start(extra: ["--health-check", TrialBootProcessTests.healthCheck])
    let log = log(of: daemon, containing: "proved itself")
    #expect(log.contains("boot state rebuilt from evidence"), "\(log)")
    #expect(
      log.contains("slot B proved itself: the rebuilt boot state is confirmed and saved; updates go on"),
      "\(log)")
    #expect(try daemon.status().provisional == false)
    #expect(FileManager.default.fileExists(atPath: stateFile(daemon, "boot.state").path), "saved")
    let info = try runTool("otactl", ["info", "--device", daemon.socket])
    #expect(!info.output.contains("boot state: rebuilt"), "\(info.output)")

    let v2 = try Data(contentsOf: URL(fileURLWithPath: TrialBootProcessTests.sample("firmware-v2.bin")))
    let pushed = try trial.push("firmware-v3.bin", to: daemon, ["--no-activate"])
    #expect(pushed.status == 0, "\(pushed.errors)\n\(daemon.log)")
    #expect(daemon.slotBytes(daemon.slotB, count: v2.count) == [UInt8](v2), "the kept slot is never written")
    #expect(daemon.stop() == 0)
  }

  /// The evidence picks the wrong slot (the bootloader last started A, which holds the rolled-back
  /// v3): its health check fails, the other slot holds a verified image, so otad tries it, and v2
  /// proves itself there. No one at the console, no update lost.
  @Test func aRebuiltStateWhoseSlotFailsItsHealthCheckTriesTheOtherSlot() throws {
    // [P-PREP-3]
    let daemon = try deviceWithoutEvidence()
    let link = stateFile(daemon, "current").path
    try FileManager.default.removeItem(atPath: link)
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: daemon.slotA.path)
    try daemon.start(extra: ["--health-check", TrialBootProcessTests.healthCheck])
    let log = log(of: daemon, containing: "proved itself")
    #expect(log.contains("slot A did not prove itself"), "\(log)")
    #expect(log.contains("trying slot B, which holds a verified image"), "\(log)")
    #expect(log.contains("slot B proved itself: the rebuilt boot state is confirmed and saved"), "\(log)")
    let status = try daemon.status()
    #expect(status.running == "B" && status.provisional == false, "\(status)")
    #expect(status.slot("B")?.version == "2.0.0+0")
    #expect(daemon.stop() == 0)
  }

  /// With `confirm = "manual"` and no health check, a central that is not authenticated cannot
  /// confirm a rebuilt state (over the simulated link nobody pairs): CONFIRM changes nothing.
  @Test func anUnpairedCentralsConfirmLeavesARebuiltStateProvisional() throws {
    // [P-PREP-3]
    let daemon = try deviceWithoutEvidence()
    try daemon.start(extra: ["--confirm", "manual"])
    let confirm = try runTool("otactl", ["confirm", "--device", daemon.socket])
    #expect(confirm.status != 0 && confirm.output.contains("CONFIRM: invalid state"), "\(confirm.output)")
    #expect(confirm.errors.contains("only from a paired central"), "\(confirm.errors)")
    #expect(try daemon.status().provisional == true, "\(confirm.output)\(confirm.errors)")
    let info = try runTool("otactl", ["info", "--device", daemon.socket])
    #expect(info.output.contains("boot state: rebuilt"), "\(info.output)")
    #expect(daemon.stop() == 0)
  }
}
