import CZlib

/// Why raw deflate data could not be inflated to the length it claimed.
public enum InflateError: Error, Equatable, Sendable {
  /// Not a valid deflate stream (zlib's message).
  case invalid(String)
  /// The stream ended before producing the claimed length.
  case tooShort(produced: Int, expected: Int)
  /// The stream produces more than the claimed length (or has bytes after its end).
  case tooLong(expected: Int)
}

/// Raw deflate (RFC 1951, zlib's windowBits −15: no header, no trailer), the compression of data
/// operations. Inflation is bounded: it never produces more than the length the caller expects.
public enum RawDeflate {
  /// `bytes` compressed at `level` (0 to 9; zlib's default is 6).
  public static func compress(_ bytes: some Collection<UInt8>, level: Int32 = 6) -> [UInt8] {
    let input = Array(bytes)
    var stream = z_stream()
    guard blueota_deflate_init_raw(&stream, level) == Z_OK else { return [] }
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 16)
    let produced = input.withUnsafeBufferPointer { inputBuffer in
      output.withUnsafeMutableBufferPointer { outputBuffer -> Int in
        stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
        stream.avail_in = uInt(inputBuffer.count)
        stream.next_out = outputBuffer.baseAddress
        stream.avail_out = uInt(outputBuffer.count)
        // deflateBound makes room for the whole stream: one call with Z_FINISH ends it.
        guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { return 0 }
        return outputBuffer.count - Int(stream.avail_out)
      }
    }
    output.removeSubrange(produced...)
    return output
  }

  /// Inflates `compressed`, which must produce exactly `length` bytes and end there, handing the
  /// output to `sink` in pieces of at most `pieceSize` bytes with their offset in the output. Memory
  /// is one piece plus zlib's 32 KiB window, whatever the input claims.
  public static func inflate(
    _ compressed: some Collection<UInt8>, length: Int, pieceSize: Int = 4096,
    _ sink: (_ offset: Int, _ piece: UnsafeBufferPointer<UInt8>) -> Void
  ) throws(InflateError) {
    let input = Array(compressed)
    var stream = z_stream()
    guard blueota_inflate_init_raw(&stream) == Z_OK else { throw .invalid("inflateInit2 failed") }
    defer { inflateEnd(&stream) }
    var piece = [UInt8](repeating: 0, count: max(1, pieceSize))
    var produced = 0
    let result: Result<Void, InflateError> = input.withUnsafeBufferPointer { inputBuffer in
      stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
      stream.avail_in = uInt(inputBuffer.count)
      while true {
        // One byte more than is still owed: a stream that goes on past `length` shows itself.
        let room = min(piece.count, length - produced + 1)
        let status = piece.withUnsafeMutableBufferPointer { out -> Int32 in
          stream.next_out = out.baseAddress
          stream.avail_out = uInt(room)
          return CZlib.inflate(&stream, Z_NO_FLUSH)
        }
        let count = room - Int(stream.avail_out)
        if produced + count > length { return .failure(.tooLong(expected: length)) }
        if count > 0 {
          piece.withUnsafeBufferPointer { sink(produced, UnsafeBufferPointer(rebasing: $0[0..<count])) }
          produced += count
        }
        switch status {
        case Z_STREAM_END:
          guard produced == length else { return .failure(.tooShort(produced: produced, expected: length)) }
          guard stream.avail_in == 0 else { return .failure(.tooLong(expected: length)) }
          return .success(())
        case Z_OK:
          continue
        case Z_BUF_ERROR:
          // No progress possible: the input ran out before the stream's end.
          return .failure(.tooShort(produced: produced, expected: length))
        default:
          let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
          return .failure(.invalid(message))
        }
      }
    }
    try result.get()
  }

  /// Inflates into a new array of exactly `length` bytes.
  public static func inflate(_ compressed: some Collection<UInt8>, length: Int) throws(InflateError)
    -> [UInt8]
  {
    var output: [UInt8] = []
    output.reserveCapacity(length)
    try inflate(compressed, length: length) { _, piece in output.append(contentsOf: piece) }
    return output
  }
}
