import OTASystemTesting
import Testing

@testable import OTASystem

/// The L2CAP socket layer without a radio: addresses in the kernel's byte order, the socket
/// address's PSM, and the calls traced through the seam.
@Suite struct L2CAPSocketTests {
  @Test func addressesParseAndPrintMostSignificantFirst() throws {
    let address = try #require(BluetoothAddress(parsing: "aa:0B:cc:DD:ee:01"))
    #expect(address.bytes == [0xAA, 0x0B, 0xCC, 0xDD, 0xEE, 0x01])
    #expect(address.description == "AA:0B:CC:DD:EE:01")
    for bad in ["", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA:BB:CC:DD:EE:GG", "A:BB:CC:DD:EE:FF0"] {
      #expect(BluetoothAddress(parsing: bad) == nil, "\(bad)")
    }
  }

  /// bdaddr_t is little-endian: the last byte written is the first in memory.
  @Test func theKernelTakesAddressesLeastSignificantFirst() throws {
    let address = try #require(BluetoothAddress(parsing: "11:22:33:44:55:66"))
    var kernel = address.kernelValue
    let bytes = withUnsafeBytes(of: &kernel.b) { Array($0) }
    #expect(bytes == [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
    #expect(BluetoothAddress(kernelValue: kernel) == address)
  }

  @Test func theSocketAddressCarriesTheFamilyPSMAndType() throws {
    let endpoint = L2CAPEndpoint(
      address: try #require(BluetoothAddress(parsing: "11:22:33:44:55:66")), type: .leRandom, psm: 0x0081)
    let raw = endpoint.socketAddress
    #expect(Int32(raw.l2_family) == 31)  // AF_BLUETOOTH
    #expect(withUnsafeBytes(of: raw.l2_psm) { Array($0) } == [0x81, 0x00])  // little-endian on the wire
    #expect(raw.l2_bdaddr_type == 2)  // BDADDR_LE_RANDOM
    #expect(L2CAPEndpoint(raw) == endpoint)
  }

  @Test func phyBitsNameTheTransmitSide() {
    #expect(L2CAPChannelParameters.phyName(0x0200 | 0x0400) == "1M")
    #expect(L2CAPChannelParameters.phyName(0x0800 | 0x1000) == "2M")
    #expect(L2CAPChannelParameters.phyName(0x2000) == "Coded")
    #expect(L2CAPChannelParameters.phyName(0) == nil)
  }

  @Test func aSocketTheKernelRefusesIsATypedErrorAndOneTracedCall() {
    let trace = SystemCallTrace(rules: [.init(.socket, path: "l2cap", .fail(.familyNotSupported))])
    #expect(throws: SystemError(operation: "socket", path: "l2cap", errno: .familyNotSupported)) {
      try trace.run { try FileDescriptor.l2capSocket(nonBlocking: true) }
    }
    #expect(trace.lines == ["socket l2cap -> EAFNOSUPPORT"])
  }

  /// On a descriptor that is no Bluetooth socket every option call fails: the parameters come back
  /// unknown (each call traced), and setting one throws with the option's name.
  @Test func optionsTheKernelDoesNotGiveAreUnknown() throws {
    let (one, other) = try FileDescriptor.unixSocketPair(.sequencedPacket)
    defer {
      try? one.close()
      try? other.close()
    }
    let trace = SystemCallTrace()
    let parameters = trace.run { one.l2capParameters }
    #expect(parameters == L2CAPChannelParameters())
    #expect(trace.lines.filter { $0.hasPrefix("getsockopt") }.count == 4)
    #expect(throws: SystemError.self) { try trace.run { try one.setReceiveMTU(4100) } }
    #expect(trace.lines.last?.hasPrefix("setsockopt BT_RCVMTU ->") == true)
  }
}
