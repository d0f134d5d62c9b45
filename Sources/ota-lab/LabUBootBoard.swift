import Foundation
import OTABoot
import OTALab
import OTASystem
import OTAWire

/// The lab device's board under `--bootloader uboot`: the U-Boot harness's (Scripts/bootloaders/uboot)
/// emulated board in the device's folder, made and powered on by the harness's own scripts
/// (board.sh, qemu.sh, boot-once.py). Debian's U-Boot runs boot.cmd on every power-on and decides;
/// the lab only reads what it left: its environment (fw_printenv), boots.log, powered-on.
struct LabUBootBoard: Sendable {
  /// The board's folder (the device's: boot-once.py finds the slots there as a.img and b.img).
  let folder: String
  /// Scripts/bootloaders/uboot.
  let scripts: String
  /// The qemu-system-aarch64 qemu.sh chose (one whose flash lets U-Boot's saveenv persist).
  let qemu: String

  var config: String { folder + "/fw_env.config" }
  var cmdline: String { folder + "/cmdline" }
  var bootsLog: String { folder + "/boots.log" }
  var poweredOnFile: String { folder + "/powered-on" }

  /// The harness's scripts beside the sample images (the checkout's Scripts/bootloaders/uboot), and
  /// the packages the board needs, all installed: else an error that names what is missing and how
  /// to install it.
  static func check(images: String) throws -> (scripts: String, qemu: String) {
    let scripts = URL(fileURLWithPath: images).deletingLastPathComponent()
      .appendingPathComponent("Scripts/bootloaders/uboot").path
    guard FileSystem.exists(scripts + "/board.sh"), FileSystem.exists(scripts + "/boot-once.py") else {
      throw LabError(
        "--bootloader uboot runs the U-Boot harness's scripts, and \(scripts) has none: run ota-lab from"
          + " the checkout (or give --images the checkout's Images folder)")
    }
    let missing: String
    do {
      missing = try tools(timeout: .seconds(30)).runText("bash", [scripts + "/board.sh", "missing"])
        .trimmingCharacters(in: .whitespacesAndNewlines)
    } catch { throw LabError("--bootloader uboot: cannot check the board's packages: \(error)") }
    if !missing.isEmpty {
      throw LabError(
        """
        --bootloader uboot needs the Debian packages the U-Boot harness uses; missing: \(missing).
        Install them with: sudo apt-get install \(missing)
        (or, from the checkout: source Scripts/setup.sh; blueota_install_debian \(missing))
        """)
    }
    let qemu: String
    do {
      // Debian 12's own qemu (7.2) loses U-Boot's saveenv: qemu.sh fetches a fixed one, once, into
      // BLUEOTA_CACHE (default /var/cache/blueota).
      qemu = try tools(timeout: .seconds(600)).runText("bash", [scripts + "/qemu.sh"])
        .trimmingCharacters(in: .whitespacesAndNewlines)
    } catch {
      throw LabError(
        "--bootloader uboot: Scripts/bootloaders/uboot/qemu.sh found no qemu-system-aarch64 whose flash"
          + " lets U-Boot save its environment (\(error)); set UBOOT_QEMU to one, or BLUEOTA_CACHE to a folder"
          + " it may write to")
    }
    return (scripts, qemu)
  }

  private static func tools(timeout: Duration) -> ToolRunner { ToolRunner(timeout: timeout) }

  /// Makes the board (board.sh make), powers it on once (U-Boot makes its environment on its
  /// defaults and starts slot A), and provisions it as the harness does: A alone, 3 boots.
  func make() throws {
    do {
      try Self.tools(timeout: .seconds(60)).run("bash", [scripts + "/board.sh", "make", folder])
      try powerOn()
      try Self.tools(timeout: .seconds(30)).run(
        "bash",
        [scripts + "/board.sh", "provision", folder, "BOOT_ORDER=A", "BOOT_A_LEFT=3", "BOOT_B_LEFT=0"])
    } catch let error as LabError {
      throw error
    } catch {
      throw LabError("the U-Boot board could not be made in \(folder): \(error)")
    }
  }

  /// One power-on to a started kernel (boot-once.py: U-Boot chooses, the harness's watchdog resets a
  /// hung kernel): the restart command otad runs, and the lab's power cut's power-on.
  func powerOn() throws {
    do {
      try Self.tools(timeout: .seconds(300)).run("/bin/sh", ["-c", restartCommand])
    } catch { throw LabError("the board did not boot (see \(folder)/console): \(error)") }
  }

  /// otad's `[boot] restart`: the harness's power-on, with qemu.sh's qemu.
  var restartCommand: String {
    "UBOOT_QEMU=\(Self.quoted(qemu)) python3 \(Self.quoted(scripts + "/boot-once.py")) \(Self.quoted(folder))"
  }

  /// otad's configuration for the board: the U-Boot backend on this board's environment and kernel
  /// command line, its boot stage in `otad run`, boot-once.py as its restart. The lab's flags give
  /// the rest.
  var otadConfiguration: String {
    """
    [boot]
    backend = "uboot"
    stage = "daemon"
    restart = \(Self.tomlString(restartCommand))
    [boot.uboot]
    cmdline = \(Self.tomlString(cmdline))
    config = \(Self.tomlString(config))

    """
  }

  /// What U-Boot left, beside otad's view: the panel's part. `reading`: the environment as the
  /// watcher last read it; nil (no look yet) reads it here.
  func look(
    otad: LabSnapshot.Boot, reading: Result<[String: String], UBootXray.EnvironmentUnreadable>? = nil
  ) -> LabSnapshot.BootVariables {
    let tools = ToolRunner(timeout: .seconds(5))
    let environment =
      reading
      ?? Result { () throws(UBootXray.EnvironmentUnreadable) in
        do { return VariableListing.parse(try tools.runText("fw_printenv", ["-c", config])) } catch {
          throw UBootXray.EnvironmentUnreadable("\(error)")
        }
      }
    let pointer: String
    switch environment {
    case .success(let variables):
      do {
        pointer = try UBootBackend(tools: tools, cmdline: cmdline, config: config).pointer(
          variables: variables
        )
        .description
      } catch { pointer = "unreadable: \(error)" }
    case .failure(let why): pointer = "unreadable: \(why.reason)"
    }
    return UBootXray.view(
      environment: environment, boots: boots(), poweredOn: poweredOn(),
      now: Date().timeIntervalSince1970, otad: otad, pointer: pointer, config: "fw_env.config")
  }

  /// U-Boot's boots as the harness logged them, oldest first.
  func boots() -> [UBootBoot] {
    UBootBoot.parse((try? FileSystem.readFile(bootsLog)).map { String(decoding: $0, as: UTF8.self) } ?? "")
  }

  /// The board is on now: boot-once.py's file, its pid still running (a killed harness leaves it).
  func poweredOn() -> UBootPowerOn? {
    guard let bytes = try? FileSystem.readFile(poweredOnFile),
      let on = UBootPowerOn(file: String(decoding: bytes, as: UTF8.self)),
      FileSystem.exists("/proc/\(on.pid)")
    else { return nil }
    return on
  }

  static func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }

  static func tomlString(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      + "\""
  }
}
