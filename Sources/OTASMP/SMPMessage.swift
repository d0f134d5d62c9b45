import OTACBOR

/// One whole SMP message: its header, with the body's length filled in, then the CBOR body.
public enum SMPMessage {
  public static func encoded(
    _ operation: SMPOperation, version: UInt8 = 1, group: UInt16, command: UInt8, sequence: UInt8,
    _ body: CBOR
  ) -> [UInt8] {
    let bytes = body.encoded
    return SMPHeader(
      operation: operation, version: version, length: UInt16(clamping: bytes.count), group: group,
      sequence: sequence, command: command
    ).encoded + bytes
  }
}
