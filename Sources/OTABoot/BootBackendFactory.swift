import OTABoot
import OTAStorage
import OTATrust

extension BootConfiguration {
  /// The bootloader backend this configuration names, over the layout's slot paths.
  public func makeBackend(for layout: DeviceLayout) -> any BootBackend {
    switch backend {
    case .file:
      return FileLinkBackend(link: link ?? layout.defaultBootLink, slotPaths: layout.slots)
    case .tryboot:
      return TrybootBackend(
        bootDirectory: trybootDirectory, partitions: trybootPartitions, bootloaderNode: trybootNode)
    case .uboot:
      return UBootBackend(tools: ToolRunner(), cmdline: cmdline)
    case .grub:
      return GrubBackend(tools: ToolRunner(), environmentFile: grubEnvironment, cmdline: cmdline)
    }
  }
}

extension DaemonConfiguration {
  /// The boot state in the layout's state directory, its lock, and the backend.
  /// The slots and the image policy are the evidence a lost boot state is rebuilt from.
  public func makeBootControl(layout: DeviceLayout, storage: DeviceStorage, policy: ImagePolicy)
    -> BootControl
  {
    BootControl(
      records: storage.records, backend: boot.makeBackend(for: layout),
      lock: StateLock(path: layout.bootLockPath), factoryVersion: factoryVersion,
      attempts: boot.attempts, slots: storage.slots, policy: policy)
  }
}
