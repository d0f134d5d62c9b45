import OTAFuzzing
import OTATrustFuzzing

/// libFuzzer's entry point for the `trust` target: one input through `TrustFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(TrustFuzzer.check(bytes), target: "trust")
  return 0
}
