import OTAFuzzing

/// libFuzzer's entry point for the `mcuboot` target: one input through `MCUbootFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(MCUbootFuzzer.check(bytes), target: "mcuboot")
  return 0
}
