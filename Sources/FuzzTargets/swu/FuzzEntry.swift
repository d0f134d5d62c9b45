import OTAFuzzing
import OTAGatewayFuzzing

/// libFuzzer's entry point for the `swu` target: one input through `SWUFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(SWUFuzzer.check(bytes), target: "swu")
  return 0
}
