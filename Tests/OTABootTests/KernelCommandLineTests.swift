import Foundation
import OTAWire
import Testing

@testable import OTABoot

@Suite("Kernel command line")
struct KernelCommandLineTests {
  @Test(arguments: [
    ("console=ttyS0,115200 root=/dev/mmcblk0p2 rootwait rauc.slot=A", SlotID.a),
    ("rauc.slot=B quiet", .b),
    ("quiet rauc.slot=b\n", .b),
    ("root=PARTLABEL=rootfs-a otad.slot=a", .a),
    ("OTAD.SLOT=B", .b),
    ("Rauc.Slot=a", .a),
    ("rauc.slot=\"A\" ro", .a),
    ("rauc.slot=A\trauc.slot=B", .b),
  ])
  func namesTheSlot(line: String, slot: SlotID) throws {
    #expect(try KernelCommandLine.slot(in: line) == slot)
  }

  @Test(arguments: ["", "root=/dev/sda2 quiet splash", "xrauc.slot=A", "rauc.slots=A", "rauc.slot"])
  func namesNoSlot(line: String) throws {
    #expect(try KernelCommandLine.slot(in: line) == nil)
  }

  @Test func anUnknownSlotNameIsAnError() {
    #expect(
      throws: BootBackendError("the kernel command line has rauc.slot=C, which names neither slot A nor B")
    ) {
      try KernelCommandLine.slot(in: "quiet rauc.slot=C")
    }
  }
}
