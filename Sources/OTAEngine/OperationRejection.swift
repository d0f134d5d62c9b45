import OTAChecksum
import OTAWire

/// Why the receiver dropped a data operation: each breaks one rule of PROTOCOL.md's Data section.
public enum OperationRejection: Error, Equatable, Sendable, CustomStringConvertible {
  case malformed(WireError)
  case tooLong(length: UInt32, limit: UInt32)
  case outsideWindow(Range<UInt64>, window: Range<UInt64>)
  case sourceOutsideRunningImage(Range<UInt64>, imageSize: UInt32)
  case badDeflate(InflateError)
  case runningSlotUnreadable(String)
  /// The stored ranges past the committed offset are at their limit and this one touches none.
  case tooScattered(Range<UInt64>, ranges: Int)
  /// A zstd part while the central has not turned features bit 4 on (or the device has it off).
  case framesOff
  /// A zstd part while no running image is known: a frame's prefix is the running image.
  case frameWithoutRunningImage
  case frameRefused(FrameAssembly.Refusal)
  /// A whole frame that did not decode against the running image (libzstd's reason).
  case badFrame(String)
  /// A whole frame some of whose target bytes are stored already (and not all of them).
  case frameOverStoredBytes(Range<UInt64>)

  public var description: String {
    switch self {
    case .malformed(let error): "malformed operation: \(error.reason)"
    case .tooLong(let length, let limit): "operation of \(length) bytes, over the limit of \(limit)"
    case .outsideWindow(let range, let window):
      "operation's target \(range.lowerBound)..<\(range.upperBound) outside "
        + "\(window.lowerBound)..<\(window.upperBound)"
    case .sourceOutsideRunningImage(let range, let size):
      "operation's source \(range.lowerBound)..<\(range.upperBound) outside the running image (\(size) bytes)"
    case .badDeflate(let error): "operation's deflate payload: \(error)"
    case .runningSlotUnreadable(let reason): "running slot unreadable: \(reason)"
    case .tooScattered(let range, let ranges):
      "operation's target \(range.lowerBound)..<\(range.upperBound) would open a range of its own past "
        + "\(ranges) apart already"
    case .framesOff: "a zstd part without features bit 4 turned on"
    case .frameWithoutRunningImage: "a zstd part while no running image is known (Info offset 84 is 0)"
    case .frameRefused(let refusal): "\(refusal)"
    case .badFrame(let reason): "zstd frame: \(reason)"
    case .frameOverStoredBytes(let range):
      "zstd frame's target \(range.lowerBound)..<\(range.upperBound) overlaps bytes stored already"
    }
  }
}

/// The pure half of applying an operation: the rules, and the target bytes from its payload and
/// (for copy and patch) the running slot's bytes the host read.
public enum OperationDecoder {
  /// Checks every rule that needs no IO. `window` is `[committed, min(committed + capacity, size))`.
  public static func check(
    _ operation: DataOperation, window: Range<UInt64>, maxLength: UInt32, runningImageSize: UInt32
  ) throws(OperationRejection) {
    guard operation.length <= maxLength else {
      throw .tooLong(length: operation.length, limit: maxLength)
    }
    let target = operation.targetRange
    guard target.lowerBound >= window.lowerBound, target.upperBound <= window.upperBound else {
      throw .outsideWindow(target, window: window)
    }
    if let source = operation.sourceRange, source.upperBound > UInt64(runningImageSize) {
      throw .sourceOutsideRunningImage(source, imageSize: runningImageSize)
    }
  }

  /// The target bytes of a raw or deflate operation (no running-slot bytes needed).
  public static func output(of operation: DataOperation) throws(OperationRejection) -> ArraySlice<UInt8>? {
    switch operation.body {
    case .raw(let bytes):
      return bytes
    case .deflate(let length, let compressed):
      do {
        return ArraySlice(try RawDeflate.inflate(compressed, length: Int(length)))
      } catch {
        throw .badDeflate(error)
      }
    case .copy, .patch, .zstdPart:
      return nil
    }
  }

  /// A patch's differences inflated once without keeping them: a patch that would be dropped for
  /// its payload is dropped before the running slot is read for it (no read for a write that
  /// cannot be stored).
  public static func checkDifferences(of operation: DataOperation) throws(OperationRejection) {
    guard case .patch(_, let length, let differences) = operation.body else { return }
    do {
      try RawDeflate.inflate(differences, length: Int(length)) { _, _ in }
    } catch {
      throw .badDeflate(error)
    }
  }

  /// The target bytes of a copy or patch operation from `source`, the running slot's bytes at its
  /// source range; a patch's differences are added in place, piece by piece, so memory stays one
  /// operation's output.
  public static func output(of operation: DataOperation, source: [UInt8]) throws(OperationRejection)
    -> [UInt8]
  {
    var bytes = source
    guard bytes.count == Int(operation.length) else {
      throw .runningSlotUnreadable("read \(bytes.count) bytes, wanted \(operation.length)")
    }
    if case .patch(_, let length, let differences) = operation.body {
      do {
        try RawDeflate.inflate(differences, length: Int(length)) { offset, piece in
          for index in piece.indices { bytes[offset + index] &+= piece[index] }
        }
      } catch {
        throw .badDeflate(error)
      }
    }
    return bytes
  }
}
