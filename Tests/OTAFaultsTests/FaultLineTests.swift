import OTAFaults
import OTAWire
import Testing

/// A fault's line as app teams write it (docs/APP-TESTING.md): read, written back the same way,
/// and every line that cannot mean anything refused with what would do.
@Suite struct FaultLineTests {
  @Test(arguments: [
    ("drop-link after=37%", "drop-link after=37% times=1"),
    ("drop-link at=validate times=always", "drop-link at=validate times=always"),
    ("refuse at=activate status=busy times=always", "refuse status=busy at=activate times=always"),
    ("refuse at=prepare status=11", "refuse status=storage-error at=prepare times=1"),
    ("refuse at=smp-upload rc=10 times=3", "refuse rc=10 at=smp-upload times=3"),
    ("delay by=2s at=window chance=0.3 seed=7", "delay by=2s at=window chance=0.3 seed=7"),
    ("delay by=250ms", "delay by=250ms times=1"),
    ("lose-chunk after=64KiB", "lose-chunk after=65536 times=1"),
    ("corrupt-chunk", "corrupt-chunk times=1"),
    ("restart after=1MiB", "restart after=1048576 times=1"),
    ("power-cut at=smp-reset", "power-cut at=smp-reset times=1"),
    ("refuse at=dfu-validate status=crc-error", "refuse status=crc-error at=dfu-validate times=1"),
    ("refuse at=dfu-start status=4", "refuse status=data-size-exceeds-limit at=dfu-start times=1"),
    ("delay by=1s at=dfu-receive", "delay by=1s at=dfu-receive times=1"),
    ("fail-health-check", "fail-health-check times=1"),
    ("storage-full after=50% chance=1 seed=0 times=2", "storage-full after=50% chance=1 seed=0 times=2"),
    ("  drop-link   at=block-hashes  ", "drop-link at=block-hashes times=1"),
  ])
  func aLineIsReadAndWrittenBackInItsCanonicalForm(line: String, canonical: String) throws {
    let fault = try Fault(parsing: line)
    #expect(fault.description == canonical)
    #expect(try Fault(parsing: canonical) == fault, "the canonical line reads back as the same fault")
  }

  @Test func theSettingsMeanWhatTheySay() throws {
    #expect(try Fault(parsing: "drop-link after=37%") == Fault(.dropLink, after: .percent(37)))
    #expect(
      try Fault(parsing: "refuse at=activate status=busy times=always")
        == Fault(.refuse(status: StatusCode.busy.rawValue), at: .ota(.activate), firing: .always))
    #expect(
      try Fault(parsing: "delay by=2s at=window chance=0.3 seed=7")
        == Fault(
          .delay(.seconds(2)), at: .ota(.window), firing: .chance(perMillion: 300_000, seed: 7, times: nil)))
    #expect(try Fault(parsing: "refuse at=smp-upload rc=10") == Fault(.refuse(status: 10), at: .smp(.upload)))
  }

  @Test(arguments: [
    ("", "an empty fault"),
    ("explode", "no fault 'explode'"),
    ("drop-link", "drop-link needs at=REQUEST or after="),
    ("drop-link after=101%", "a share is 0% to 100%"),
    ("drop-link after=12parsecs", "give bytes"),
    ("drop-link at=launch", "at=launch: no such request"),
    ("drop-link after=5 after=6", "'after' is set twice"),
    ("drop-link after=5 when=now", "unknown setting 'when'"),
    ("drop-link after", "'after' is not a setting"),
    ("refuse status=busy", "refuse needs at=REQUEST"),
    ("refuse at=validate", "refuse needs status=NAME"),
    ("refuse at=validate status=success", "status=success: use one of"),
    ("refuse at=validate status=0", "status=0: use one of"),
    ("refuse at=validate status=200", "status=200: use one of"),
    ("refuse at=validate rc=3", "refused with status=NAME, not rc="),
    ("refuse at=smp-upload status=busy", "refused with rc=N"),
    ("refuse at=smp-upload rc=0", "needs rc=N"),
    ("refuse at=dfu-start rc=3", "refused with status=NAME, not rc="),
    ("refuse at=dfu-start status=busy", "status=busy: use one of"),
    ("refuse at=dfu-start status=1", "status=1: use one of"),
    ("refuse at=dfu-start", "refuse at=dfu-start needs status=NAME"),
    ("delay at=window", "delay needs by=DURATION"),
    ("delay by=0ms", "give 1ms to 60s"),
    ("delay by=61s", "give 1ms to 60s"),
    ("delay by=1h", "give 1ms to 60s"),
    ("lose-chunk at=window", "acts on data"),
    ("fail-health-check after=5", "takes no at= or after="),
    ("drop-link after=5 times=0", "times=0: give a count from 1"),
    ("drop-link after=5 times=often", "times=often"),
    ("drop-link after=5 chance=0.5", "chance= needs seed=N"),
    ("drop-link after=5 chance=1.5 seed=1", "chance=1.5"),
    ("drop-link after=5 chance=0 seed=1", "chance=0"),
    ("drop-link after=5 chance=0.1234567 seed=1", "chance=0.1234567"),
    ("drop-link after=5 seed=1", "seed= goes with chance="),
    ("drop-link after=5 by=2s", "drop-link takes no by="),
    ("lose-chunk status=busy", "lose-chunk takes no status="),
  ])
  func aLineThatMeansNothingIsRefusedWithWhatWouldDo(line: String, expected: String) {
    #expect {
      _ = try Fault(parsing: line)
    } throws: { error in
      "\(error)".contains(expected)
    }
  }

  @Test func everyRequestNameReadsBackAsItsRequest() throws {
    for name in FaultRequest.names {
      let request = try #require(FaultRequest(name: name))
      #expect(request.name == name)
    }
    #expect(FaultRequest(name: "block-hashes") == .ota(.blockHashes))
    #expect(FaultRequest(name: "smp-upload") == .smp(.upload))
    #expect(FaultRequest.SMPCommandName(group: 1, id: 1) == .upload)
    #expect(FaultRequest.SMPCommandName(group: 0, id: 5) == .reset)
    #expect(FaultRequest.SMPCommandName(group: 9, id: 1) == nil)
    #expect(FaultRequest(name: "dfu-activate") == .nordic(.activate))
    #expect(FaultRequest.NordicCommandName(opcode: 0x04) == .validate)
    #expect(FaultRequest.NordicCommandName(opcode: 0x08) == nil)
    #expect(FaultRequest(name: "sdfu-execute") == .secureDFU(.execute))
    #expect(FaultRequest.SecureDFUCommandName(opcode: 0x06) == .select)
    #expect(FaultRequest.SecureDFUCommandName(opcode: 0x05) == nil)
    #expect(
      try Fault(parsing: "refuse at=sdfu-create status=insufficient-resources").description
        == "refuse status=insufficient-resources at=sdfu-create times=1")
    #expect(
      try Fault(parsing: "refuse at=sdfu-execute status=8").description.contains(
        "status=operation-not-permitted"))
    #expect(throws: FaultSpecError.self) { try Fault(parsing: "refuse at=sdfu-execute rc=10") }
    #expect(throws: FaultSpecError.self) { try Fault(parsing: "refuse at=sdfu-execute status=1") }
  }
}
