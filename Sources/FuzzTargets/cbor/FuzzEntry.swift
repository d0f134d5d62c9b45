import OTAFuzzing

/// libFuzzer's entry point for the `cbor` target: one input through `CBORFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(CBORFuzzer.check(bytes), target: "cbor")
  return 0
}
