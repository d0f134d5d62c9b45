import OTABoot
import OTAStorage
import OTAWire

extension DaemonConfiguration {
  /// The bootloader backend the configuration names, over the configured slot paths.
  public func makeBootBackend() -> any BootBackend {
    switch boot.backend {
    case .file:
      let link = boot.link ?? (stateDirectory ?? ".") + "/current"
      return FileLinkBackend(link: link, slotPaths: SlotPair(a: slotA ?? "", b: slotB ?? ""))
    case .tryboot:
      return TrybootBackend(
        bootDirectory: boot.trybootDirectory, partitions: boot.trybootPartitions,
        bootloaderNode: boot.trybootNode)
    case .uboot:
      return UBootBackend(tools: ToolRunner(), cmdline: boot.cmdline)
    case .grub:
      return GrubBackend(tools: ToolRunner(), environmentFile: boot.grubEnvironment, cmdline: boot.cmdline)
    }
  }

  /// The boot state in the state directory, its lock, and the backend.
  /// The slots and the image policy are the evidence a lost boot state is rebuilt from.
  public func makeBootControl(records: any RecordStore, slots: SlotAccess, policy: ImagePolicy) -> BootControl
  {
    BootControl(
      records: records, backend: makeBootBackend(),
      lock: stateDirectory.map { StateLock(path: $0 + "/boot.lock") }, factoryVersion: factoryVersion,
      attempts: boot.attempts, slots: slots, policy: policy)
  }
}
