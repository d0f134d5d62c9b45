import CZstd

/// Why a zstd frame could not be decoded to the bytes it must produce.
public enum ZstdFrameError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Not exactly one zstd frame: a bad magic, a cut frame, bytes after it, or a skippable frame.
  case notOneFrame(String)
  /// The frame's header does not say how many bytes it produces (the content size is required).
  case noContentSize
  /// It claims more bytes than the receiver takes from one frame.
  case tooLong(claimed: UInt64, limit: Int)
  /// libzstd refused it while decoding (its message): a corrupt frame, or one that needs a
  /// dictionary other than the running image.
  case invalid(String)

  public var description: String {
    switch self {
    case .notOneFrame(let reason): "not one zstd frame: \(reason)"
    case .noContentSize: "the zstd frame does not state its content size"
    case .tooLong(let claimed, let limit):
      "the zstd frame claims \(claimed) bytes, over the limit of \(limit)"
    case .invalid(let reason): "the zstd frame does not decode: \(reason)"
    }
  }
}

/// zstd frames coded against a *prefix*: the running image, whose bytes the frame's matches may
/// reach as if they came right before it (zstd's `--patch-from`, `ZSTD_CCtx_refPrefix`). The central
/// codes a release's frames once; the device decodes each in one call into its output, with the
/// running slot as the prefix, so it holds no decoder state between frames and no window buffer:
/// its memory is the frame, its output and the decoder's context (about 95 KiB).
public enum ZstdFrame {
  /// The largest window a frame may ask for: 2 GiB (zstd's limit on 64-bit), so that a prefix of a
  /// partition of up to 2 GiB can be reached. One-shot decoding allocates no window of that size.
  public static let maxWindowLog: Int32 = 31

  /// How many bytes `frame` produces, from its header; nil when it does not say.
  public static func contentSize(_ frame: [UInt8]) -> UInt64? {
    let size = frame.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
    // ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two largest values.
    return size >= UInt64.max - 1 ? nil : size
  }

  /// Decodes `frame`, exactly one zstd frame stating its content size of at most `maxLength`
  /// bytes, against `prefix`.
  public static func decode(
    _ frame: [UInt8], prefix: UnsafeRawBufferPointer, maxLength: Int
  ) throws(ZstdFrameError) -> [UInt8] {
    let compressedSize = frame.withUnsafeBytes { ZSTD_findFrameCompressedSize($0.baseAddress, $0.count) }
    if ZSTD_isError(compressedSize) != 0 {
      throw .notOneFrame(String(cString: ZSTD_getErrorName(compressedSize)))
    }
    guard compressedSize == frame.count else {
      throw .notOneFrame("\(frame.count - compressedSize) bytes after the frame's end")
    }
    guard let claimed = contentSize(frame) else { throw .noContentSize }
    guard claimed <= UInt64(maxLength) else { throw .tooLong(claimed: claimed, limit: maxLength) }
    guard claimed > 0 else { throw .notOneFrame("a frame of no bytes") }
    guard let context = ZSTD_createDCtx() else { throw .invalid("no memory for a decoder") }
    defer { ZSTD_freeDCtx(context) }
    try check(ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, maxWindowLog))
    if prefix.count > 0 { try check(ZSTD_DCtx_refPrefix(context, prefix.baseAddress, prefix.count)) }
    var output = [UInt8](repeating: 0, count: Int(claimed))
    let produced = output.withUnsafeMutableBytes { out in
      frame.withUnsafeBytes {
        ZSTD_decompressDCtx(context, out.baseAddress, out.count, $0.baseAddress, $0.count)
      }
    }
    try check(produced)
    guard produced == Int(claimed) else {
      throw .invalid("produced \(produced) of the \(claimed) bytes it states")
    }
    return output
  }

  private static func check(_ result: Int) throws(ZstdFrameError) {
    if ZSTD_isError(result) != 0 { throw .invalid(String(cString: ZSTD_getErrorName(result))) }
  }
}

/// The central's side: a target cut into frames, each coded against the whole base as its prefix,
/// sharing one dictionary of the base built once (attached to each frame, never copied into it).
/// Level 22 with frames of 1 MiB came to 1.03× a single `zstd --ultra -22 --long=27 --patch-from`
/// stream on a 96 MiB system-partition pair (docs/BENCHMARKS.md).
public final class ZstdFrameEncoder {
  private let dictionary: OpaquePointer
  private let context: OpaquePointer
  private let level: Int32
  private let windowLog: Int32

  /// Builds the dictionary of `base` at `level` (1 to 22): the slow part, about 40 s for 96 MiB at
  /// level 22. `frameLength` is the longest frame it will code, for the window it needs.
  public init?(base: [UInt8], level: Int32, frameLength: Int) {
    self.level = min(max(level, 1), ZSTD_maxCLevel())
    // The window reaches from a frame's last byte back to the base's first.
    var log: Int32 = 10
    while log < ZstdFrame.maxWindowLog, (1 << UInt64(log)) < UInt64(base.count) + UInt64(frameLength) {
      log += 1
    }
    windowLog = log
    guard let parameters = ZSTD_createCCtxParams() else { return nil }
    defer { ZSTD_freeCCtxParams(parameters) }
    ZSTD_CCtxParams_init(parameters, self.level)
    ZSTD_CCtxParams_setParameter(parameters, ZSTD_c_windowLog, log)
    ZSTD_CCtxParams_setParameter(
      parameters, blueota_zstd_c_force_attach_dict, Int32(ZSTD_dictForceAttach.rawValue))
    let built = base.withUnsafeBytes {
      ZSTD_createCDict_advanced2(
        $0.baseAddress, $0.count, ZSTD_dlm_byCopy, ZSTD_dct_rawContent, parameters, ZSTD_defaultCMem)
    }
    guard let built, let context = ZSTD_createCCtx() else { return nil }
    dictionary = built
    self.context = context
  }

  deinit {
    ZSTD_freeCDict(dictionary)
    ZSTD_freeCCtx(context)
  }

  /// One frame of `bytes` (at most the `frameLength` given at init), its content size in its header.
  public func frame(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
    ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters)
    // The context's own parameters: left to the dictionary's, a frame above 256 KiB gets the level's
    // default window and loses the far part of the base.
    let settings: [(ZSTD_cParameter, Int32)] = [
      (ZSTD_c_compressionLevel, level), (ZSTD_c_windowLog, windowLog),
      (blueota_zstd_c_force_attach_dict, Int32(ZSTD_dictForceAttach.rawValue)), (ZSTD_c_checksumFlag, 0),
      (ZSTD_c_dictIDFlag, 0), (ZSTD_c_contentSizeFlag, 1),
    ]
    for (parameter, value) in settings
    where ZSTD_isError(ZSTD_CCtx_setParameter(context, parameter, value)) != 0 {
      return nil
    }
    guard ZSTD_isError(ZSTD_CCtx_refCDict(context, dictionary)) == 0 else { return nil }
    var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
    let produced = output.withUnsafeMutableBytes { out in
      bytes.withUnsafeBytes { ZSTD_compress2(context, out.baseAddress, out.count, $0.baseAddress, $0.count) }
    }
    guard ZSTD_isError(produced) == 0 else { return nil }
    output.removeSubrange(produced...)
    return output
  }
}
