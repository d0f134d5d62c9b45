/// The protobuf wire format as far as Secure DFU's init packet needs it (`dfu-cc.proto`): a
/// message's fields in order, each a varint or a length-delimited run of bytes; fixed 32- and 64-bit
/// fields are skipped. Trusts nothing: a truncated field, an overlong varint or a group throws.
struct ProtobufFields {
  enum Value: Equatable {
    case varint(UInt64)
    case bytes(ArraySlice<UInt8>)
    case fixed
  }

  struct Malformed: Error, Equatable {}

  private(set) var fields: [(number: UInt32, value: Value)] = []

  init(_ bytes: ArraySlice<UInt8>) throws(Malformed) {
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let key = try Self.varint(bytes, &index)
      guard key >> 3 > 0, key >> 3 <= UInt64(UInt32.max) else { throw Malformed() }
      let number = UInt32(key >> 3)
      switch key & 7 {
      case 0:
        fields.append((number, .varint(try Self.varint(bytes, &index))))
      case 1, 5:
        let width = key & 7 == 1 ? 8 : 4
        guard bytes.endIndex - index >= width else { throw Malformed() }
        index += width
        fields.append((number, .fixed))
      case 2:
        let length = try Self.varint(bytes, &index)
        guard length <= UInt64(bytes.endIndex - index) else { throw Malformed() }
        let end = index + Int(length)
        fields.append((number, .bytes(bytes[index..<end])))
        index = end
      default:
        throw Malformed()
      }
    }
  }

  /// The last varint of field `number` (protobuf's rule for a repeated scalar read as one).
  func varint(_ number: UInt32) -> UInt64? {
    fields.last { $0.number == number && $0.value.isVarint }.flatMap {
      if case .varint(let value) = $0.value { value } else { nil }
    }
  }

  /// The last length-delimited value of field `number`.
  func bytes(_ number: UInt32) -> ArraySlice<UInt8>? {
    fields.last { $0.number == number && !$0.value.isVarint }.flatMap {
      if case .bytes(let value) = $0.value { value } else { nil }
    }
  }

  /// Every value of a repeated varint field, packed or not.
  func varints(_ number: UInt32) throws(Malformed) -> [UInt64] {
    var values: [UInt64] = []
    for field in fields where field.number == number {
      switch field.value {
      case .varint(let value): values.append(value)
      case .bytes(let packed):
        var index = packed.startIndex
        while index < packed.endIndex { values.append(try Self.varint(packed, &index)) }
      case .fixed: throw Malformed()
      }
    }
    return values
  }

  private static func varint(_ bytes: ArraySlice<UInt8>, _ index: inout Int) throws(Malformed) -> UInt64 {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      guard index < bytes.endIndex, shift < 64 else { throw Malformed() }
      let byte = bytes[index]
      index += 1
      value |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 { return value }
      shift += 7
    }
  }
}

extension ProtobufFields.Value {
  fileprivate var isVarint: Bool { if case .varint = self { true } else { false } }
}
