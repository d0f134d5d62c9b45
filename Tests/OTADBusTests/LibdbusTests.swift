import CDBus
import Testing

/// libdbus is linked through its .systemLibrary target, with the shim's type codes.
@Suite struct LibdbusTests {
  @Test func libdbusIsLinkedAndRecent() {
    var major: Int32 = 0
    var minor: Int32 = 0
    var micro: Int32 = 0
    dbus_get_version(&major, &minor, &micro)
    #expect(major == 1 && minor >= 12)
    #expect(cdbus_type_byte == Int32(UInt8(ascii: "y")))
  }
}
