import OTAFuzzing
import OTAGatewayFuzzing

/// libFuzzer's entry point for the `ddi` target: one input through `DDIFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(DDIFuzzer.check(bytes), target: "ddi")
  return 0
}
