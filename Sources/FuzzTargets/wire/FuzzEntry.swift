import OTAFuzzing

/// libFuzzer's entry point for the `wire` target: one input through `WireFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(WireFuzzer.check(bytes), target: "wire")
  return 0
}
