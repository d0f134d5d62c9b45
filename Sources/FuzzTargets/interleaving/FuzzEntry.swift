import OTADeviceFuzzing
import OTAFuzzing

/// libFuzzer's entry point for the `interleaving` target: one input through `InterleavingFuzzer`, a
/// trap on any violation (the run's trace printed first).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(InterleavingFuzzer.check(bytes), target: "interleaving") {
    InterleavingFuzzer.run(bytes, tracing: true).trace
  }
  return 0
}
