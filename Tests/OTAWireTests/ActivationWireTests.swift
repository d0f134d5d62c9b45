import Testing

@testable import OTAWire

/// SCHEDULE, ACTIVATE's `deferred` answer and the declined status, byte for byte as
/// docs/PROTOCOL.md gives them.
@Suite struct ActivationWireTests {
  @Test func scheduleCarriesItsWindowAndPermanence() throws {
    // [P-REQ-15]
    let request = Request.schedule(
      ActivationWindow(notBefore: 0x6000_0001, notAfter: 0x6000_0E11, permanent: true))
    #expect(request.encoded == [0x0A, 0x01, 0x00, 0x00, 0x60, 0x11, 0x0E, 0x00, 0x60, 0x01])
    #expect(try Request(bytes: request.encoded) == request)
    let open = Request.schedule(ActivationWindow(notBefore: 5, notAfter: nil, permanent: false))
    #expect(open.encoded == [0x0A, 5, 0, 0, 0, 0, 0, 0, 0, 0])
    #expect(try Request(bytes: open.encoded) == open)
    #expect(throws: WireError.self) { try Request(bytes: [0x0A, 5, 0, 0, 0, 0, 0, 0, 0, 0x02]) }
    #expect(throws: WireError.self) { try Request(bytes: [0x0A, 5, 0, 0, 0, 0, 0, 0, 0]) }
    #expect(throws: WireError.self) { try Request(bytes: [0x0A, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }
  }

  @Test func aDeferredActivationSaysWhyAndWhenToAskAgain() throws {
    // [P-RESP-10] [P-RESP-8]
    let bytes: [UInt8] = [0x60, 0x05, 0x0E, 0x01, 0x3C, 0x00, 0x00, 0x00]
    let response = try Response(bytes: bytes)
    #expect(response.status == .deferred)
    #expect(response.payload == .deferral(ActivationDeferral(reason: .locked, askAgainAfter: 60)))
    #expect(response.encoded == bytes)
    #expect(throws: WireError.self) { try Response(bytes: [0x60, 0x05, 0x0E, 0x07, 0, 0, 0, 0]) }
    #expect(throws: WireError.self) { try Response(bytes: [0x60, 0x05, 0x0E, 0x01, 0, 0, 0]) }
    #expect(try Response(bytes: [0x60, 0x05, 0x0F]) == Response(.activate, .declined))
    #expect(StatusCode.deferred.rawValue == 0x0E && StatusCode.declined.rawValue == 0x0F)
  }

  @Test func aDeviceFromBeforeKeptActivationsKeepsNone() throws {
    // [P-INFO-2]
    var info = try InfoRecord(bytes: [UInt8](repeating: 0, count: 100).enumerated().map { $0 == 0 ? 1 : $1 })
    #expect(info.keptActivation == .none)
    info.keptActivation = KeptActivation(kind: .trial, hold: .locked, askAgainAfter: 9)
    #expect(try InfoRecord(bytes: info.encoded).keptActivation == info.keptActivation)
    #expect(Features.scheduledActivation.rawValue == 1 << 5)
    #expect(!Features.optIn.contains(.scheduledActivation))
  }
}
