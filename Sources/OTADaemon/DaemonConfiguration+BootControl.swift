import OTABoot
import OTAStorage
import OTATrust

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
