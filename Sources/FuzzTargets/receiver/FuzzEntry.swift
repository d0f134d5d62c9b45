import OTAFuzzing

/// libFuzzer's entry point for the `receiver` target: one input through `ReceiverFuzzer`, a trap on any violation.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
  FuzzFailure.trapIfAny(ReceiverFuzzer.check(bytes), target: "receiver") {
    ReceiverFuzzer.run(bytes, tracing: true).trace
  }
  return 0
}
