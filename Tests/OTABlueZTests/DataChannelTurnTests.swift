import OTALink
import OTASystem
import Testing

@testable import OTABlueZ

/// docs/PROTOCOL.md: "otad reads at most 64 SDUs per turn of its loop, so a flooding channel
/// never keeps it from the control point".
extension DataChannelTests {
  @Test func aTurnOfTheLoopTakesAtMost64SDUsAndTheNextTurnTheRest() throws {
    // [P-CHAN-10]
    let (listener, device, central) = try Self.openChannel()
    let address = try #require(Self.central)
    for index in 0..<100 {
      let sdu: [UInt8] = [UInt8(index), 0, 0, 0, 1]
      _ = try sdu.withUnsafeBytes { bytes throws(SystemError) in try central.send(bytes, waiting: false) }
    }
    let first = listener.service(readable: [device.rawValue], central: address, now: .zero)
    #expect(first.count == 64 && DataChannelListener.sdusPerTurn == 64)
    let second = listener.service(readable: [device.rawValue], central: address, now: .zero)
    #expect(second.count == 36)
    // In order, none lost.
    #expect(first + second == (0..<100).map { PeripheralEvent.dataWrite([UInt8($0), 0, 0, 0, 1]) })
  }
}
