import OTALab
import Testing

@Suite struct PushProgressTests {
  @Test func linesBecomePhasesOnATimelineAndTheCommittedOffset() {
    var push = PushProgress(label: "push v2")
    push.apply(.start(image: "firmware-v2.bin", size: 40_000, version: "2.0.0", link: "mtu=247"))
    push.apply(.phase("connecting", t: 0))
    push.apply(.phase("preparing", t: 0.2))
    push.apply(.phase("transferring", t: 0.3))
    push.apply(.progress(committed: 8192, total: 40_000, bytesOnAir: 8500, t: 0.5))
    push.apply(.resume(offset: 8192))
    push.apply(.progress(committed: 40_000, total: 40_000, bytesOnAir: 42_000, t: 1.5))
    push.apply(.phase("validating", t: 1.5))
    push.apply(.result(ok: true, exitCode: 0, error: nil, seconds: 2.5))
    #expect(push.phases.map(\.name) == ["connecting", "preparing", "transferring", "validating"])
    #expect(push.phases.map(\.end) == [0.2, 0.3, 1.5, 2.5])
    #expect(push.committed == 40_000 && push.resumes == [8192] && push.result?.ok == true)
    #expect(push.samples.count == 2 && push.phase == "succeeded" && !push.running)
  }

  @Test func aRestartedCentralGoesOnFromWhereTheTimelineWas() {
    var push = PushProgress(label: "push v2")
    push.apply(.phase("transferring", t: 0))
    push.apply(.progress(committed: 8192, total: 40_000, bytesOnAir: 9000, t: 2))
    push.restarted()
    push.apply(.phase("connecting", t: 0.1))
    push.apply(.progress(committed: 16_384, total: 40_000, bytesOnAir: 9000, t: 1))
    #expect(push.phases.map(\.start) == [0, 2.1])
    #expect(push.elapsed == 3 && push.bytesOnAir == 18_000 && push.restarts == 1)
  }

  @Test func samplesStayBoundedForAnyNumberOfWindows() {
    var push = PushProgress(label: "big")
    for index in 0..<10_000 {
      push.apply(
        .progress(committed: index * 8192, total: 81_920_000, bytesOnAir: index * 8300, t: Double(index)))
    }
    #expect(push.samples.count <= PushProgress.sampleLimit)
    #expect(push.samples.last?.first == Double(9999), "the latest sample is kept")
    #expect(push.samples.first?.first == Double(0), "and the first")
  }
}

@Suite struct SlotPictureTests {
  func window(_ offset: Int, _ length: Int, _ crc: String) -> DeviceEvent {
    DeviceEvent(name: "window", time: 0, args: ["offset": "\(offset)", "length": "\(length)", "crc": crc])
  }

  @Test func cellsShowCommittedInFlightFailedAndResent() {
    let picture = SlotPicture(
      slot: "B", size: 16 * 1024, committed: 8 * 1024,
      windows: [
        window(0, 4096, "ok"), window(4096, 4096, "CRC mismatch"), window(4096, 4096, "ok"),
        window(8192, 4096, "CRC mismatch"),
      ],
      receiving: true, windowCapacity: 4096, cells: 16)
    #expect(picture.cells == "ccccrrrrxxxx....")
    #expect(picture.windowsChecked == 2 && picture.windowsFailed == 2)
  }

  @Test func nothingIsInFlightWhenNoPushRuns() {
    let picture = SlotPicture(
      slot: "B", size: 1000, committed: 500, windows: [], receiving: false, windowCapacity: 100, cells: 10)
    #expect(picture.cells == "ccccc.....")
  }
}

@Suite struct LabPageTests {
  @Test func thePageFetchesNothingFromElsewhere() {
    #expect(!LabPage.html.contains("http://") && !LabPage.html.contains("https://"))
    #expect(!LabPage.html.contains("<script src") && !LabPage.html.contains("<link"))
    for action in [
      "push-v2", "push-v3", "push-unsigned", "push-encrypted", "drop-link", "power-cut", "flip-byte",
      "set-loss", "set-fault", "clear-faults", "push-delta", "reset",
    ] {
      #expect(LabPage.html.contains("data-action=\"\(action)\""), "\(action)")
    }
  }
}

@Suite struct DeviceEventDigestTests {
  @Test func aLongTransferKeepsTheRecentEventsItsFailuresAndACountOfTheRest() {
    var all = [
      DeviceEvent(name: "boot decision", time: 0, args: ["row": "confirmed slot runs"]),
      DeviceEvent(name: "window", time: 1, args: ["offset": "0", "crc": "CRC mismatch"]),
      DeviceEvent(name: "PREPARE", time: 2, args: ["status": "success"]),
    ]
    for index in 0..<5000 {
      let crc = index == 7 ? "CRC mismatch" : "ok"
      all.append(
        DeviceEvent(name: "window", time: UInt64(3 + index), args: ["offset": "\(index * 8192)", "crc": crc]))
    }
    let digest = DeviceEventDigest(all, recent: 100)
    #expect(digest.events.count == 103, "the boot decision, PREPARE, one failed window and the last 100")
    #expect(digest.windowsCheckedEarlier == 4899)
    #expect(digest.events.map(\.name).prefix(3) == ["boot decision", "PREPARE", "window"])
    #expect(
      digest.events[2].args["offset"] == "\(7 * 8192)",
      "this transfer's failed window; the one before PREPARE is dropped")
    let picture = LabSnapshotPictureProbe.checked(digest)
    #expect(picture == 4999)
  }
}

/// The picture's count of checked windows from a digest: the dropped ones and the kept ones.
enum LabSnapshotPictureProbe {
  static func checked(_ digest: DeviceEventDigest) -> Int {
    let windows = digest.events.filter { $0.name == "window" }
    return SlotPicture(
      slot: "B", size: 5000 * 8192, committed: 5000 * 8192, windows: windows,
      checkedEarlier: digest.windowsCheckedEarlier, receiving: false, windowCapacity: 8192
    ).windowsChecked
  }
}
