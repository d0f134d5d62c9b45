import OTACBOR
import OTASMP

/// Invariants of the SMP server on arbitrary messages: an answer for every request (never a trap),
/// and every answer a response to that request with a body that is one CBOR map of the length its
/// header says.
enum SMPServerCheck {
  static let server = SMPServer(configuration: SMPServerConfiguration(bufferSize: 1024, bufferCount: 2))
  static let view = SMPDeviceView(
    images: [
      SMPImageSlot(
        slot: 0, version: "1.0.0", hash: Array(repeating: 0xAB, count: 32), confirmed: true, active: true)
    ], downgradesRefused: true)

  static func message(_ bytes: [UInt8]) -> [InvariantViolation] {
    switch server.handle(bytes, device: view) {
    case .ignore:
      return []
    case .respond(let answer):
      return check(answer: answer, to: bytes)
    case .perform(_, let pending):
      let answer = server.respond(to: pending, with: .failure(.generic(.notSupported)))
      return check(answer: answer, to: bytes)
    }
  }

  static func check(answer: [UInt8], to request: [UInt8]) -> [InvariantViolation] {
    guard let asked = try? SMPHeader(bytes: request), let header = try? SMPHeader(bytes: answer) else {
      return [InvariantViolation("response header", "an answer without a header: \(answer)")]
    }
    var violations: [InvariantViolation] = []
    if header.sequence != asked.sequence || header.group != asked.group || header.command != asked.command {
      violations.append(InvariantViolation("response header", "answers \(header) to \(asked)"))
    }
    if header.operation.isRequest {
      violations.append(InvariantViolation("response header", "a response with a request's operation"))
    }
    let body = Array(answer.dropFirst(SMPHeader.byteCount))
    if body.count != Int(header.length) {
      violations.append(
        InvariantViolation("response length", "header says \(header.length), body \(body.count)"))
    }
    guard case .map = try? CBORDecoder.decode(body) else {
      violations.append(InvariantViolation("response body", "not one CBOR map: \(body)"))
      return violations
    }
    return violations
  }

  /// The stream whole and cut at points the input's first byte picks give the same messages, or both
  /// fail.
  static func stream(_ bytes: [UInt8]) -> [InvariantViolation] {
    guard let cut = bytes.first else { return [] }
    let stream = Array(bytes.dropFirst())
    var whole = SMPFrameAssembler(maxBody: 512)
    let expected = try? whole.append(stream)
    var pieces = SMPFrameAssembler(maxBody: 512)
    var got: [[UInt8]]? = []
    let step = max(1, Int(cut % 32))
    var index = 0
    while index < stream.count {
      let end = min(stream.count, index + step)
      do {
        got?.append(contentsOf: try pieces.append(stream[index..<end]))
      } catch {
        got = nil
        break
      }
      index = end
    }
    if let expected, let got, expected != got {
      return [
        InvariantViolation(
          "reassembly", "cut every \(step) bytes: \(got.count) messages, whole \(expected.count)")
      ]
    }
    if (expected == nil) != (got == nil) {
      return [
        InvariantViolation("reassembly", "cut every \(step) bytes, whole and pieces disagree on failing")
      ]
    }
    return []
  }
}
