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
      return UBootBackend(tools: ToolRunner(), cmdline: cmdline, config: ubootConfig)
    case .grub:
      return GrubBackend(tools: ToolRunner(), environmentFile: grubEnvironment, cmdline: cmdline)
    }
  }
}
