import ArgumentParser

/// Which bootloader decides the lab device's boots: otad itself (the file backend's links), or
/// Debian's real U-Boot under qemu, as the U-Boot harness runs it (Scripts/bootloaders/uboot).
enum LabBootloader: String, ExpressibleByArgument, CaseIterable, Sendable {
  case file
  case uboot
}
