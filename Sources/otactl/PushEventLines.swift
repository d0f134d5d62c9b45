import OTAWire

/// The JSON lines `otactl push --json` writes, one per event; docs/OTACTL.md lists their fields.
enum PushEventLine {
  struct Start: Encodable {
    let event = "start"
    let image: String
    let size: Int
    let version: String
    let link: String
  }

  struct Resume: Encodable {
    let event = "resume"
    let offset: Int
  }

  struct Phase: Encodable {
    let event = "phase"
    let phase: String
    let t: Double
  }

  struct Progress: Encodable {
    let event = "progress"
    let committed: Int
    let total: Int
    /// Data-write bytes sent so far: operations or chunks with their headers, resends included.
    let bytesOnAir: Int
    let t: Double
  }

  /// The last line of a push that succeeded. The device's state after it is null when the push
  /// did not activate; the link's figures are there only on the simulated link.
  struct Succeeded: Encodable {
    let event = "result"
    let ok = true
    let seconds: Double
    let goodput: Double
    let bytesSent: Int
    /// Every data-write byte sent, and how: "plain", "compressed" or "delta".
    let bytesOnAir: Int
    let transferMode: String
    /// What the choice was made on: the whole image as operations and as plain chunks.
    let plannedBytesOnAir: Int
    let plainBytesOnAir: Int
    /// The running slot's block hashes the plan used: their block size and count (0 when none
    /// were read), and the BLOCK HASHES requests that read them (0 on the characteristic's path).
    let blockSize: Int
    let blockHashesRead: Int
    let blockHashRequests: Int
    let dryRun: Bool
    let windows: Int
    let windowFailures: Int
    /// Image bytes and chunks sent more than once (after a loss, a failed window or a resume).
    let bytesResent: Int
    let chunksResent: Int
    /// Missing-range reports the device sent (0 when the feature is off).
    let missingReports: Int
    let reconnects: Int
    let resumedFrom: [Int]
    let runningVersion: Nullable<String>
    let runningSlot: Nullable<String>
    let confirmed: Nullable<Bool>
    let alreadyRunning: Bool
    let joinedTrial: Bool
    let rawCapacity: Double?
    let ratio: Double?
    /// The air's ceiling for the same interval, event length and PHY (no packet limit, any MTU).
    let physicalCeiling: Double?
    let ceilingRatio: Double?
    let mtu: Int?
    let connectToReady: Double?
    /// From the first PREPARE to VALIDATE's answer, and the image's bytes over that time: the
    /// transfer without the connection, Info and STATUS before it or the activation after it.
    let transferSeconds: Double?
    let transferGoodput: Double?
    let transferCeilingRatio: Double?
    /// "gatt" or "l2cap": how the data went on the last connection.
    let dataPath: String
    let attMTU: Int?
    /// The L2CAP channel's PSM, send MTU (the largest SDU), receive MTU and PHY, as the kernel
    /// reported them (absent over GATT).
    let l2capPSM: Int?
    let l2capMTU: Int?
    let l2capReceiveMTU: Int?
    /// The transmit PHY: the channel's, else the controller's last PHY update, else "1M" when the
    /// link's PHY never changed (absent when nothing is known of the link).
    let phy: String?
    /// The connection as the controller reported it (absent when otactl could not read its
    /// events: no CAP_NET_RAW, or the simulated link): interval and supervision timeout in ms,
    /// peripheral latency in connection events, the data length's largest payloads (octets) and
    /// their air times (µs) each way (absent when the controller reported no change from 27).
    let connectionInterval: Double?
    let peripheralLatency: Int?
    let supervisionTimeout: Int?
    let dataLengthTx: Int?
    let dataLengthRx: Int?
    let dataLengthTxTime: Int?
    let dataLengthRxTime: Int?
  }

  /// The last line of a push that failed: the exit code and the explanation otactl prints.
  struct Failed: Encodable {
    let event = "result"
    let ok = false
    let exitCode: Int
    let error: String
    let seconds: Double
    let resumedFrom: [Int]
    let lastOutcome: Nullable<OutcomeJSON>
  }
}

/// An update's outcome as Info reports it.
struct OutcomeJSON: Encodable {
  let result: String
  let from: String
  let to: String
  let reason: String
  let attemptsUsed: Int

  init(_ outcome: UpdateOutcome) {
    result = "\(outcome.result)"
    from = "\(outcome.from)"
    to = "\(outcome.to)"
    reason = "\(outcome.reason)"
    attemptsUsed = Int(outcome.attemptsUsed)
  }
}
