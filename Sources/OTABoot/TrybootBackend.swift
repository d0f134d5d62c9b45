import OTAStorage
import OTAWire

/// Raspberry Pi firmware A/B with `autoboot.txt` and tryboot: the firmware boots the partition named
/// in `[all]`, or the one in `[tryboot]` when the one-shot tryboot flag was set by
/// `reboot "0 tryboot"`. The flag is cleared before the trial starts, so a trial that hangs or
/// crashes falls back to the primary on the next reset: each armed boot is one attempt.
public struct TrybootBackend: BootBackend {
  /// Where the first FAT partition, the one holding autoboot.txt, is mounted.
  public let bootDirectory: String
  /// Slot A's and slot B's boot partition numbers, e.g. [2, 3].
  public let partitions: SlotPair<Int>
  /// The firmware's device-tree node with the `partition` and `tryboot` properties.
  public let bootloaderNode: String

  public var name: String { "tryboot" }

  public init(
    bootDirectory: String, partitions: SlotPair<Int>,
    bootloaderNode: String = "/proc/device-tree/chosen/bootloader"
  ) {
    self.bootDirectory = bootDirectory
    self.partitions = partitions
    self.bootloaderNode = bootloaderNode
  }

  /// The path of autoboot.txt.
  public var autobootFile: String { bootDirectory + "/autoboot.txt" }

  /// The slot whose partition the firmware booted, and whether this boot was a tryboot.
  public func booted() throws(BootBackendError) -> (slot: SlotID, tryboot: Bool) {
    guard let partition = try property("partition", missingIsFine: false) else {
      throw BootBackendError(
        "\(bootloaderNode)/partition: the firmware did not say which partition it booted")
    }
    let slot = try slot(ofPartition: Int(partition))
    let tryboot = try property("tryboot", missingIsFine: true) ?? 0
    return (slot, tryboot == 1)
  }

  public func bootedSlot() throws(BootBackendError) -> SlotID? { try booted().slot }

  /// autoboot.txt's `[all]` partition as the primary, its `[tryboot]` one as a trial when it
  /// differs, and the slot the firmware started.
  public func pointer() throws(BootBackendError) -> BootPointer {
    var pointer = BootPointer(booted: try booted().slot)
    guard let bytes = try BootFileSystem.contents(of: autobootFile) else { return pointer }
    var section = ""
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      let text = String(line.filter { !$0.isWhitespace })
      if text.hasPrefix("[") {
        section = text
      } else if text.hasPrefix("boot_partition="), let number = Int(text.dropFirst("boot_partition=".count)),
        let slot = try? slot(ofPartition: number)
      {
        if section == "[all]" {
          pointer.primary = slot
        } else if section == "[tryboot]" {
          pointer.trial = slot
        }
      }
    }
    if pointer.trial == pointer.primary { pointer.trial = nil }
    return pointer
  }

  /// Rewrites autoboot.txt (write, fsync, rename) when its content differs from the plan's.
  public func apply(_ plan: BootPlan) throws(BootBackendError) {
    let wanted = Array(try autoboot(for: plan).utf8)
    if try BootFileSystem.contents(of: autobootFile) == wanted { return }
    try BootFileSystem.replace(autobootFile, with: wanted)
  }

  /// `reboot "0 tryboot"` when a trial is armed: partition 0 is autoboot.txt's choice, and the tryboot
  /// flag makes the firmware take the `[tryboot]` section once.
  public func restartCommand(for plan: BootPlan) -> [String]? {
    plan.trial == nil ? nil : ["reboot", "0 tryboot"]
  }

  /// The autoboot.txt for `plan`. Without a trial the `[tryboot]` section names the primary too, so a
  /// stray tryboot cannot start a slot that must not boot.
  public func autoboot(for plan: BootPlan) throws(BootBackendError) -> String {
    let primary = try partition(of: plan.primary)
    let tried =
      try plan.trial.map { trial throws(BootBackendError) in try partition(of: trial.slot) } ?? primary
    return "[all]\ntryboot_a_b=1\nboot_partition=\(primary)\n[tryboot]\nboot_partition=\(tried)\n"
  }

  private func partition(of slot: SlotID) throws(BootBackendError) -> Int {
    try checkPartitions()
    return partitions[slot]
  }

  private func slot(ofPartition partition: Int) throws(BootBackendError) -> SlotID {
    try checkPartitions()
    if let slot = partitions.firstSlot(where: { $0 == partition }) { return slot }
    throw BootBackendError(
      "the firmware booted partition \(partition), which is neither slot A's (\(partitions.a)) nor slot B's (\(partitions.b))"
    )
  }

  private func checkPartitions() throws(BootBackendError) {
    guard partitions.a != partitions.b, partitions.values.allSatisfy({ $0 >= 1 }) else {
      throw BootBackendError(
        "tryboot needs two different partition numbers for slots A and B, not \(partitions.values)")
    }
  }

  /// A 32-bit big-endian device-tree property (longer files are read by their first four bytes).
  private func property(_ name: String, missingIsFine: Bool) throws(BootBackendError) -> UInt32? {
    let path = bootloaderNode + "/" + name
    guard let bytes = try BootFileSystem.contents(of: path) else {
      if missingIsFine { return nil }
      throw BootBackendError("\(path) does not exist: the firmware did not say which partition it booted")
    }
    guard bytes.count >= 4 else {
      throw BootBackendError("\(path) holds \(bytes.count) bytes, not a 4-byte big-endian number")
    }
    return bytes[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
  }
}
