import Foundation

/// The Raspberry Pi EEPROM bootloader's part of tryboot A/B, as Raspberry Pi's documentation states
/// it, byte for byte; the GPU firmware cannot be emulated, so this is what TrybootBackend is held to.
/// Sources (raspberrypi/documentation, documentation/asciidoc/computers/):
/// - [autoboot] config_txt/autoboot.adoc: "`autoboot.txt` is limited to 512 bytes and supports the
///   `[all]`, `[none]` and `[tryboot]` conditional filters"; `boot_partition` "Specifies the
///   partition number for booting unless the partition number was already specified as a parameter
///   to the `reboot` command"; "Specifying partition `0` means boot from the `default` partition
///   which is the first bootable FAT partition"; "The `[tryboot]` filter ... passes if the system was
///   booted with the `tryboot` flag set", set by `sudo reboot "0 tryboot"`; `tryboot_a_b=1` makes
///   the switch "at the partition level".
/// - [bootflow] raspberry-pi/bootflow-2711.adoc, "Fail-safe OS updates (TRYBOOT)": the flag is
///   "a one-shot flag which, if set, is cleared" before the firmware starts, "a crash or reset will
///   cause the original" configuration "to be loaded on the next reboot"; "To set the `tryboot`
///   flag add `tryboot` after the partition number in the `reboot` command".
/// - [device-tree] configuration/device-tree.adoc, "Common bootloader properties
///   `/chosen/bootloader`": `partition` - 32-bit integer, "The partition number used during boot";
///   `tryboot` - 32-bit integer, "Set to `1` if the `tryboot` flag was set at boot"; and "numbers
///   (big-endian)" for every property.
struct PiFirmwareSimulation {
  /// The reboot parameters the kernel hands to the firmware (SET_REBOOT_FLAGS): a partition (0: none
  /// given) and the one-shot tryboot flag.
  var rebootPartition = 0
  var trybootFlag = false
  /// The partition the firmware uses when nothing names one: "the first bootable FAT partition".
  let defaultPartition: Int

  init(defaultPartition: Int = 1) { self.defaultPartition = defaultPartition }

  /// `reboot "ARG"`: "[bootflow] add `tryboot` after the partition number". Anything else the
  /// firmware would not understand is a test failure, so it traps.
  mutating func reboot(_ arguments: [String]) {
    guard arguments.first == "reboot" else { preconditionFailure("not a reboot: \(arguments)") }
    let words = arguments.dropFirst().joined(separator: " ").split(separator: " ")
    rebootPartition = words.first.flatMap { Int($0) } ?? 0
    trybootFlag = words.dropFirst().contains("tryboot")
  }

  /// A crash, a watchdog reset or a power cut: no reboot parameters at all.
  mutating func reset() {
    rebootPartition = 0
    trybootFlag = false
  }

  /// One boot: reads the first 512 bytes of `autoboot` ([autoboot]) under the filters the flag
  /// selects, takes the partition, clears the one-shot flag ([bootflow]) and writes the two
  /// device-tree properties, big-endian ([device-tree]), into `node`. Returns the partition.
  mutating func boot(autoboot: Data?, node: String) throws -> Int {
    let tryboot = trybootFlag
    var partition = rebootPartition
    if partition == 0, let autoboot {
      let text = String(decoding: autoboot.prefix(512), as: UTF8.self)
      var applies = true  // lines before any filter: as [all]
      for raw in text.split(whereSeparator: \.isNewline) {
        let line = raw.trimmingCharacters(in: .whitespaces)
        switch line {
        case "[all]": applies = true
        case "[none]": applies = false
        case "[tryboot]": applies = tryboot
        default:
          guard applies, line.hasPrefix("boot_partition=") else { continue }
          partition = Int(line.dropFirst("boot_partition=".count)) ?? partition
        }
      }
    }
    if partition == 0 { partition = defaultPartition }
    reset()  // "a one-shot flag which, if set, is cleared"
    for (name, value) in [("partition", UInt32(partition)), ("tryboot", UInt32(tryboot ? 1 : 0))] {
      let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
      try Data(bytes).write(to: URL(fileURLWithPath: node + "/" + name))
    }
    return partition
  }
}
