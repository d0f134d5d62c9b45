/// The interleaving fuzzer's seeds, written as the steps they take (`InterleavingRun` reads them
/// back): whole updates over each protocol, and the interleavings issue 42 found, so that fuzzing
/// starts deep rather than at refusals. Tests/OTAFuzzingTests/Seeds/interleaving holds them as files.
enum InterleavingSeeds {
  /// Steps, each the bytes `InterleavingRun.step` reads.
  struct Builder {
    var bytes: [UInt8] = []

    // The OTA central (step 0).
    mutating func otaConnect() { bytes += [0, 0, 2] }  // MTU 247
    mutating func otaPrepare(rightCRC: Bool = true) { bytes += [0, 2, rightCRC ? 1 : 0] }
    mutating func otaChunk(_ k: UInt8) { bytes += [0, 3, 1, k, 1] }  // committed + k × 200
    mutating func otaWindow() { bytes += [0, 6] }
    mutating func otaValidate() { bytes += [0, 7] }
    mutating func otaActivate(verdict: UInt8 = 0) { bytes += [0, 8, 0, verdict] }
    mutating func otaDisconnect() { bytes += [0, 1] }

    /// A whole OTA push of the 5000-byte image: 5 windows of 1 KiB, 6 chunks each.
    mutating func otaPush(activate: Bool = true) {
      otaConnect()
      otaPrepare()
      for _ in 0..<5 {
        for k in 0..<6 { otaChunk(UInt8(k)) }
        otaWindow()
      }
      otaValidate()
      if activate { otaActivate() }
    }

    // SMP (step 4): `client` 0 or 1 (UDP), 2 (BLE).
    mutating func smpFirstChunk(client: UInt8 = 0) { bytes += [4, client, 0] }
    mutating func smpNextChunk(client: UInt8 = 0) { bytes += [4, client, 1, 1] }
    mutating func smpStateRead(client: UInt8 = 0) { bytes += [4, client, 4] }
    mutating func smpTest(client: UInt8 = 0) { bytes += [4, client, 5, 0, 1] }
    mutating func smpConfirm(client: UInt8 = 0) { bytes += [4, client, 5, 1, 0] }
    mutating func smpErase(client: UInt8 = 0) { bytes += [4, client, 6] }
    mutating func smpReset(client: UInt8 = 0, verdict: UInt8 = 0) { bytes += [4, client, 7, verdict] }

    /// A whole upload of the 6 KiB MCUboot image in 700-byte chunks, then a test.
    mutating func smpUpload(client: UInt8 = 0, test: Bool = true) {
      smpFirstChunk(client: client)
      for _ in 0..<9 { smpNextChunk(client: client) }
      smpStateRead(client: client)
      if test { smpTest(client: client) }
    }

    // Legacy DFU (step 8) from central 0 or 1.
    /// A Legacy DFU write: the command, what it reads (a packet's choice, a control's pick), and
    /// the verdict byte every Legacy step reads (for the trial, when it restarts).
    mutating func legacy(_ central: UInt8, _ command: UInt8, _ extra: [UInt8] = [], verdict: UInt8 = 0) {
      bytes += [8, central, command] + extra + [verdict]
    }

    mutating func legacyStart(_ central: UInt8 = 0) {
      for command: UInt8 in [0, 1, 2, 3, 4, 5] { legacy(central, command) }
    }

    mutating func legacyPackets(_ central: UInt8 = 0, count: Int, attacker: Bool = false) {
      for _ in 0..<count { legacy(central, 6, [attacker ? 0 : 1]) }
    }

    mutating func legacyUpdate(_ central: UInt8 = 0) {
      legacyStart(central)
      legacyPackets(central, count: 200)
      legacy(central, 8)  // VALIDATE
      legacy(central, 9, [0])  // ACTIVATE AND RESET
    }

    // Secure DFU (step 11) from central 0 or 1.
    mutating func secure(_ central: UInt8, _ command: UInt8, _ extra: [UInt8] = []) {
      bytes += [11, central, command] + extra
    }

    mutating func secureUpdate(_ central: UInt8 = 0) {
      secure(central, 0, [1])  // SELECT command
      secure(central, 1)  // CREATE command
      secure(central, 2)
      secure(central, 2)  // the init packet in two pieces
      secure(central, 3)
      secure(central, 4)  // EXECUTE: the transfer begins
      for object in 0..<3 {
        secure(central, 5)  // CREATE data
        for _ in 0..<17 { secure(central, 6, [1]) }
        secure(central, 3)
        secure(central, 4, object == 2 ? [0] : [])  // EXECUTE (the last activates: its verdict byte)
      }
    }

    mutating func wait31s() { bytes += [15, 2] }
    mutating func restart(verdict: UInt8 = 0) { bytes += [17, verdict] }
    mutating func powerCut(at operation: UInt8) { bytes += [18, operation] }
    mutating func centralGone(_ central: UInt8) { bytes += [14, central] }
  }

  static func build(_ steps: (inout Builder) -> Void) -> [UInt8] {
    var builder = Builder()
    steps(&builder)
    return builder.bytes
  }

  static let all: [(name: String, bytes: [UInt8])] = [
    ("ota-push", build { $0.otaPush() }),
    (
      "smp-upload-test-reset",
      build {
        $0.smpUpload(); $0.smpReset()
      }
    ),
    ("legacy-update", build { $0.legacyUpdate() }),
    ("secure-update", build { $0.secureUpdate() }),
    // Issue 42: a Legacy session, SMP takes over after 30 s of its silence, the Legacy session goes on.
    (
      "legacy-then-smp-test-then-legacy",
      build {
        $0.legacyStart()
        $0.legacyPackets(count: 10)
        $0.wait31s()
        $0.smpUpload()
        $0.legacyPackets(count: 217, attacker: true)
        $0.legacy(0, 9, [1])  // SYS RESET
      }
    ),
    // Issue 42: SMP's first chunk, a Legacy transfer committed past 4 KiB, SMP's chunk at 700.
    (
      "smp-then-legacy-commit-then-smp",
      build {
        $0.smpFirstChunk()
        $0.wait31s()
        $0.legacyStart()
        $0.legacyPackets(count: 60)
        $0.wait31s()
        $0.smpNextChunk()
      }
    ),
    // Two centrals on Legacy DFU: the second's reset and START while the first's session runs.
    (
      "legacy-two-centrals",
      build {
        $0.legacyStart(0)
        $0.legacyPackets(0, count: 5)
        $0.legacy(1, 9, [1])
        $0.legacy(1, 0)
        $0.legacyPackets(0, count: 195)
        $0.legacy(0, 8)
        $0.centralGone(0)
        $0.legacyUpdate(1)
      }
    ),
    // An OTA push cut by power at its 30th storage operation, then pushed again and confirmed.
    (
      "ota-power-cut",
      build {
        $0.powerCut(at: 30); $0.otaPush(); $0.otaPush()
      }
    ),
    // An OTA push whose PREPARE says CRC32 0 (what an SMP journal used to be known by), then SMP.
    (
      "ota-crc-zero-then-smp",
      build {
        $0.otaConnect()
        $0.otaPrepare(rightCRC: false)
        for k in 0..<6 { $0.otaChunk(UInt8(k)) }
        $0.otaWindow()
        $0.otaDisconnect()
        $0.smpNextChunk()
        $0.smpUpload()
      }
    ),
    // SMP tests an image, the trial runs and SMP confirms it; then Secure DFU updates again.
    (
      "smp-confirm-then-secure",
      build {
        $0.smpUpload()
        $0.smpReset(verdict: 2)
        $0.smpConfirm()
        $0.wait31s()
        $0.secureUpdate()
      }
    ),
  ]
}
