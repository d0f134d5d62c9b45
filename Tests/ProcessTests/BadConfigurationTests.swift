import Foundation
import Testing

/// Configuration and flags that cannot work are refused before anything moves: one line that names
/// the cause and what to do, exit 64, and no file created, no connection made.
@Suite(.serialized) struct BadConfigurationTests {
  static let firmware = testBytes(5000, seed: 41)

  struct DaemonCase: CustomStringConvertible, Sendable {
    var name: String
    /// Flags replacing the defaults' (`--capacity` etc.), or a TOML file's text (`config`).
    var flags: [String: String] = [:]
    var config: String?
    var slotA: SlotA = .firmware
    var says: String
    var description: String { name }

    enum SlotA: Sendable { case firmware, missing, directory }
  }

  static let daemonCases: [DaemonCase] = [
    DaemonCase(
      name: "missing slot A", slotA: .missing,
      says: "slot-a.img does not exist, but slot A holds the firmware the device runs"),
    DaemonCase(name: "slot A is a directory", slotA: .directory, says: "slot-a.img is a directory"),
    DaemonCase(
      name: "slot A larger than the capacity", flags: ["--capacity": "4KiB"],
      says: "slot-a.img is 5000 bytes, more than the slot capacity of 4096: raise the capacity"),
    DaemonCase(
      name: "capacity 0", flags: ["--capacity": "0"], says: "the slot capacity must be 1 byte to 4 GiB"),
    DaemonCase(
      name: "capacity 5GiB", flags: ["--capacity": "5GiB"], says: "the slot capacity must be 1 byte to 4 GiB"),
    DaemonCase(name: "capacity -1", flags: ["--capacity": "-1"], says: "'-1' is not a size"),
    DaemonCase(name: "window 0", flags: ["--window": "0"], says: "the window must be 64 bytes to 16 MiB"),
    DaemonCase(
      name: "window huge", flags: ["--window": "99999999GiB"], says: "the window must be 64 bytes to 16 MiB"),
    DaemonCase(name: "attempts 0", flags: ["--attempts": "0"], says: "--attempts must be 1 to 255"),
    DaemonCase(name: "attempts 300", flags: ["--attempts": "300"], says: "--attempts"),
    DaemonCase(name: "health timeout 0", flags: ["--health-timeout": "0s"], says: "is not a duration"),
    DaemonCase(name: "empty slot path", flags: ["--slot-b": ""], says: "a slot's path is empty"),
    DaemonCase(
      name: "[slots] a = 5",
      config: "[slots]\na = 5\nb = \"SLOTB\"\ncapacity = \"2MiB\"\n[state]\ndirectory = \"STATE\"\n",
      says: "[slots] a must be a path in quotes"),
  ]

  @Test(arguments: daemonCases)
  func otadRefusesBeforeAnythingMoves(_ testCase: DaemonCase) throws {
    // [SEC-CHECK-15] [SEC-ATK-43]
    let daemon = try Daemon(firmware: testCase.slotA == .firmware ? Self.firmware : nil)
    if testCase.slotA == .directory {
      try FileManager.default.createDirectory(at: daemon.slotA, withIntermediateDirectories: false)
    }
    var arguments = ["run"]
    if let config = testCase.config {
      let file = daemon.folder.appendingPathComponent("otad.toml")
      let text = config.replacingOccurrences(of: "SLOTB", with: daemon.slotB.path)
        .replacingOccurrences(of: "STATE", with: daemon.stateDirectory.path)
      try Data(text.utf8).write(to: file)
      arguments += ["--config", file.path, "--socket", daemon.socket]
    } else {
      var flags = daemon.baseArguments
      for (flag, value) in testCase.flags {
        if let index = flags.firstIndex(of: flag) {
          flags[index + 1] = value
        } else {
          flags += [flag, value]
        }
      }
      arguments += flags.map { $0 }
      // "--capacity -1" as a user types it: the value is given with '=' so it is not taken for a flag.
      arguments = Self.joinNegative(arguments)
    }
    let result = try runTool("otad", arguments)
    #expect(result.status == 64, "\(testCase): \(result.errors)")
    #expect(result.errors.contains(testCase.says), "\(testCase): \(result.errors)")
    #expect(!result.errors.contains("system(operation"), "\(testCase): no Swift enum dump")
    #expect(
      !FileManager.default.fileExists(atPath: daemon.stateDirectory.path), "\(testCase): nothing was created")
    #expect(!FileManager.default.fileExists(atPath: daemon.slotB.path), "\(testCase): slot B untouched")
    if testCase.slotA == .missing {
      #expect(!FileManager.default.fileExists(atPath: daemon.slotA.path), "no empty slot A was made up")
    }
  }

  /// `--flag -1` becomes `--flag=-1`, which every parser reads as a value.
  static func joinNegative(_ arguments: [String]) -> [String] {
    var joined: [String] = []
    var index = 0
    while index < arguments.count {
      if index + 1 < arguments.count, arguments[index].hasPrefix("--"), arguments[index + 1].hasPrefix("-"),
        arguments[index + 1].dropFirst().first?.isNumber == true
      {
        joined.append("\(arguments[index])=\(arguments[index + 1])")
        index += 2
      } else {
        joined.append(arguments[index])
        index += 1
      }
    }
    return joined
  }

  static let pushCases: [[String]] = [
    ["--timeout", "0"], ["--timeout=-1"], ["--timeout", "nan"], ["--timeout", "1e300"],
    ["--max-reconnects=-1"], ["--max-reconnects", "100000"],
    ["--trial-timeout=-5"], ["--trial-timeout", "0"], ["--trial-timeout", "inf"],
    ["--restart-timeout", "0"], ["--restart-timeout", "1e9"],
  ]

  /// Absurd numbers on otactl push: refused with the flag named, before it connects to the device.
  @Test(arguments: pushCases)
  func otactlRefusesAbsurdNumbersBeforeConnecting(_ flags: [String]) throws {
    // [SEC-ATK-43]
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let image = daemon.folder.appendingPathComponent("image.bin")
    try Data(testBytes(3000, seed: 42)).write(to: image)
    let result = try runTool(
      "otactl", ["push", image.path, "--version", "1.1.0", "--device", daemon.socket] + flags)
    let flag = String(flags[0].prefix { $0 != "=" })
    #expect(result.status == 64, "\(flags): \(result.errors)")
    #expect(result.errors.contains(flag), "\(flags): \(result.errors)")
    #expect(!daemon.log.contains("central connected"), "\(flags): nothing reached the device")
  }
}

extension BadConfigurationTests {
  /// Pairs of otactl push flags that contradict each other: each only means something when the
  /// push activates the image, and `--no-activate` stops before ACTIVATE.
  static let contradictions: [[String]] = [
    ["--permanent", "--no-activate"], ["--no-activate", "--permanent"], ["--no-activate", "--confirm"],
  ]

  /// What a push would change on the device: slot B's bytes and every file of the state directory
  /// (the transfer journal, the boot state).
  static func footprint(_ daemon: Daemon) throws -> [String: Data] {
    var files = ["slot B": (try? Data(contentsOf: daemon.slotB)) ?? Data()]
    let names = (try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory.path)) ?? []
    for name in names {
      files[name] = try Data(contentsOf: daemon.stateDirectory.appendingPathComponent(name))
    }
    return files
  }

  /// Contradicting flags on otactl push: a usage error (exit 64) naming both, before it connects
  /// to the device; nothing on the device changes.
  @Test(arguments: contradictions)
  func otactlRefusesContradictingFlagsBeforeConnecting(_ flags: [String]) throws {
    let daemon = try Daemon(firmware: Self.firmware)
    try daemon.start()
    let image = daemon.folder.appendingPathComponent("image.bin")
    try Data(testBytes(3000, seed: 43)).write(to: image)
    let before = try Self.footprint(daemon)
    let result = try runTool(
      "otactl", ["push", image.path, "--version", "1.1.0", "--device", daemon.socket] + flags)
    #expect(result.status == 64, "\(flags): \(result.output)\n\(result.errors)")
    for flag in flags { #expect(result.errors.contains(flag), "\(flags): \(result.errors)") }
    #expect(!daemon.log.contains("central connected"), "\(flags): nothing reached the device")
    #expect(try Self.footprint(daemon) == before, "\(flags): the device's slot and journal are untouched")
    #expect(daemon.stop() == 0)
  }
}
