import OTAFuzzing
import OTAGatewayFuzzing

/// libFuzzer's entry point for the `libconfig` target: one input through `LibconfigFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(LibconfigFuzzer.check(bytes), target: "libconfig")
  return 0
}
