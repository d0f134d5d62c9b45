import OTAWire

/// Long reads: a value read piece by piece at any MTU reassembles to itself, and reads at any offset
/// (past the end included) answer or refuse without trapping.
enum LongReadCheck {
  static func check(_ bytes: [UInt8]) -> [InvariantViolation] {
    var input = FuzzInput(bytes)
    let mtu = input.int(in: -4...600)
    let strayOffset = input.int(in: -8...600)
    let value = input.rest()
    var found: [InvariantViolation] = []

    if let piece = try? LongRead.piece(of: value, at: strayOffset, mtu: mtu) {
      if piece.count > max(1, mtu - 1) {
        found.append(.init("long read piece size", "\(piece.count) bytes at MTU \(mtu)"))
      }
    } else if (0...value.count).contains(strayOffset) {
      found.append(.init("long read offset", "offset \(strayOffset) of \(value.count) bytes refused"))
    }

    var assembler = LongReadAssembler(mtu: mtu)
    var rounds = 0
    while !assembler.isComplete, rounds <= value.count + 1 {
      rounds += 1
      let offset = assembler.nextOffset
      guard let piece = try? LongRead.piece(of: value, at: offset, mtu: mtu) else {
        found.append(.init("long read", "the server refused offset \(offset) of \(value.count) bytes"))
        return found
      }
      do {
        try assembler.add(piece, at: offset)
      } catch {
        found.append(.init("long read", "the assembler refused \(piece.count) bytes at \(offset): \(error)"))
        return found
      }
    }
    if !assembler.isComplete || assembler.value != value {
      found.append(
        .init("long read reassembly", "\(value.count) bytes at MTU \(mtu) gave \(assembler.value.count)"))
    }
    return found
  }
}
