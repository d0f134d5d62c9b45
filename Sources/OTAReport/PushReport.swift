/// One line of `otactl push --json` (docs/OTACTL.md lists the fields): otactl encodes it, ota-lab
/// and other readers decode it, so writer and readers share one schema. Each line is an object with
/// an `event` ("start", "resume", "phase", "progress", "result"); a result says `ok`.
public enum PushReport: Codable, Equatable, Sendable {
  case start(Start)
  case resume(Resume)
  case phase(Phase)
  case progress(Progress)
  case succeeded(Succeeded)
  case failed(Failed)

  /// A line's event and, for a result, whether it succeeded: what picks the case when decoding.
  private struct Kind: Decodable {
    let event: String
    let ok: Bool?
  }

  public init(from decoder: any Decoder) throws {
    let kind = try Kind(from: decoder)
    switch (kind.event, kind.ok) {
    case ("start", _): self = .start(try Start(from: decoder))
    case ("resume", _): self = .resume(try Resume(from: decoder))
    case ("phase", _): self = .phase(try Phase(from: decoder))
    case ("progress", _): self = .progress(try Progress(from: decoder))
    case ("result", true?): self = .succeeded(try Succeeded(from: decoder))
    case ("result", _): self = .failed(try Failed(from: decoder))
    default:
      throw DecodingError.dataCorrupted(
        .init(codingPath: decoder.codingPath, debugDescription: "no push event \"\(kind.event)\""))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    switch self {
    case .start(let line): try line.encode(to: encoder)
    case .resume(let line): try line.encode(to: encoder)
    case .phase(let line): try line.encode(to: encoder)
    case .progress(let line): try line.encode(to: encoder)
    case .succeeded(let line): try line.encode(to: encoder)
    case .failed(let line): try line.encode(to: encoder)
    }
  }
}

extension PushReport {
  public struct Start: Codable, Equatable, Sendable {
    public private(set) var event: String = "start"
    public let image: String
    public let size: Int
    public let version: String
    public let link: String

    public init(
      image: String,
      size: Int,
      version: String,
      link: String
    ) {
      self.image = image
      self.size = size
      self.version = version
      self.link = link
    }
  }

  public struct Resume: Codable, Equatable, Sendable {
    public private(set) var event: String = "resume"
    public let offset: Int

    public init(
      offset: Int
    ) {
      self.offset = offset
    }
  }

  public struct Phase: Codable, Equatable, Sendable {
    public private(set) var event: String = "phase"
    public let phase: String
    public let t: Double

    public init(
      phase: String,
      t: Double
    ) {
      self.phase = phase
      self.t = t
    }
  }

  public struct Progress: Codable, Equatable, Sendable {
    public private(set) var event: String = "progress"
    public let committed: Int
    public let total: Int
    /// Data-write bytes sent so far: operations or chunks with their headers, resends included.
    public let bytesOnAir: Int
    public let t: Double

    public init(
      committed: Int,
      total: Int,
      bytesOnAir: Int,
      t: Double
    ) {
      self.committed = committed
      self.total = total
      self.bytesOnAir = bytesOnAir
      self.t = t
    }
  }

  /// The last line of a push that succeeded. The device's state after it is null when the push
  /// did not activate; the link's figures are there only on the simulated link.
  public struct Succeeded: Codable, Equatable, Sendable {
    public private(set) var event: String = "result"
    public private(set) var ok: Bool = true
    public let seconds: Double
    public let goodput: Double
    public let bytesSent: Int
    /// Every data-write byte sent, and how: "plain", "compressed" or "delta".
    public let bytesOnAir: Int
    public let transferMode: String
    /// What the choice was made on: the whole image as operations and as plain chunks.
    public let plannedBytesOnAir: Int
    public let plainBytesOnAir: Int
    /// A delta sent as zstd frames (features bit 4): their parts' bytes for the whole image, and
    /// the frames sent whole; 0 without frames.
    public let plannedFrameBytesOnAir: Int?
    public let framesSent: Int?
    /// The running slot's block hashes the plan used: their block size and count (0 when none
    /// were read), and the BLOCK HASHES requests that read them (0 on the characteristic's path).
    public let blockSize: Int
    public let blockHashesRead: Int
    public let blockHashRequests: Int
    public let dryRun: Bool
    public let windows: Int
    public let windowFailures: Int
    /// Image bytes and chunks sent more than once (after a loss, a failed window or a resume).
    public let bytesResent: Int
    public let chunksResent: Int
    /// Missing-range reports the device sent (0 when the feature is off).
    public let missingReports: Int
    public let reconnects: Int
    public let resumedFrom: [Int]
    public let runningVersion: Nullable<String>
    public let runningSlot: Nullable<String>
    public let confirmed: Nullable<Bool>
    public let alreadyRunning: Bool
    public let joinedTrial: Bool
    public let rawCapacity: Double?
    public let ratio: Double?
    /// The air's ceiling for the same interval, event length and PHY (no packet limit, any MTU).
    public let physicalCeiling: Double?
    public let ceilingRatio: Double?
    public let mtu: Int?
    public let connectToReady: Double?
    /// From the first PREPARE to VALIDATE's answer, and the image's bytes over that time: the
    /// transfer without the connection, Info and STATUS before it or the activation after it.
    public let transferSeconds: Double?
    public let transferGoodput: Double?
    public let transferCeilingRatio: Double?
    /// "gatt" or "l2cap": how the data went on the last connection.
    public let dataPath: String
    public let attMTU: Int?
    /// The L2CAP channel's PSM, send MTU (the largest SDU), receive MTU and PHY, as the kernel
    /// reported them (absent over GATT).
    public let l2capPSM: Int?
    public let l2capMTU: Int?
    public let l2capReceiveMTU: Int?
    /// The transmit PHY: the channel's, else the controller's last PHY update, else "1M" when the
    /// link's PHY never changed (absent when nothing is known of the link).
    public let phy: String?
    /// The connection as the controller reported it (absent when otactl could not read its
    /// events: no CAP_NET_RAW, or the simulated link): interval and supervision timeout in ms,
    /// peripheral latency in connection events, the data length's largest payloads (octets) and
    /// their air times (µs) each way (absent when the controller reported no change from 27).
    public let connectionInterval: Double?
    public let peripheralLatency: Int?
    public let supervisionTimeout: Int?
    public let dataLengthTx: Int?
    public let dataLengthRx: Int?
    public let dataLengthTxTime: Int?
    public let dataLengthRxTime: Int?
    /// A scheduled activation the device keeps (`otactl push --activate-at`/`--window`).
    public let activation: Activation?

    public init(
      seconds: Double,
      goodput: Double,
      bytesSent: Int,
      bytesOnAir: Int,
      transferMode: String,
      plannedBytesOnAir: Int,
      plainBytesOnAir: Int,
      blockSize: Int,
      blockHashesRead: Int,
      blockHashRequests: Int,
      dryRun: Bool,
      windows: Int,
      windowFailures: Int,
      bytesResent: Int,
      chunksResent: Int,
      missingReports: Int,
      reconnects: Int,
      resumedFrom: [Int],
      runningVersion: Nullable<String>,
      runningSlot: Nullable<String>,
      confirmed: Nullable<Bool>,
      alreadyRunning: Bool,
      joinedTrial: Bool,
      rawCapacity: Double?,
      ratio: Double?,
      physicalCeiling: Double?,
      ceilingRatio: Double?,
      mtu: Int?,
      connectToReady: Double?,
      transferSeconds: Double?,
      transferGoodput: Double?,
      transferCeilingRatio: Double?,
      dataPath: String,
      attMTU: Int?,
      l2capPSM: Int?,
      l2capMTU: Int?,
      l2capReceiveMTU: Int?,
      phy: String?,
      connectionInterval: Double?,
      peripheralLatency: Int?,
      supervisionTimeout: Int?,
      dataLengthTx: Int?,
      dataLengthRx: Int?,
      dataLengthTxTime: Int?,
      dataLengthRxTime: Int?,
      plannedFrameBytesOnAir: Int? = nil,
      framesSent: Int? = nil,
      activation: Activation? = nil
    ) {
      self.activation = activation
      self.plannedFrameBytesOnAir = plannedFrameBytesOnAir
      self.framesSent = framesSent
      self.seconds = seconds
      self.goodput = goodput
      self.bytesSent = bytesSent
      self.bytesOnAir = bytesOnAir
      self.transferMode = transferMode
      self.plannedBytesOnAir = plannedBytesOnAir
      self.plainBytesOnAir = plainBytesOnAir
      self.blockSize = blockSize
      self.blockHashesRead = blockHashesRead
      self.blockHashRequests = blockHashRequests
      self.dryRun = dryRun
      self.windows = windows
      self.windowFailures = windowFailures
      self.bytesResent = bytesResent
      self.chunksResent = chunksResent
      self.missingReports = missingReports
      self.reconnects = reconnects
      self.resumedFrom = resumedFrom
      self.runningVersion = runningVersion
      self.runningSlot = runningSlot
      self.confirmed = confirmed
      self.alreadyRunning = alreadyRunning
      self.joinedTrial = joinedTrial
      self.rawCapacity = rawCapacity
      self.ratio = ratio
      self.physicalCeiling = physicalCeiling
      self.ceilingRatio = ceilingRatio
      self.mtu = mtu
      self.connectToReady = connectToReady
      self.transferSeconds = transferSeconds
      self.transferGoodput = transferGoodput
      self.transferCeilingRatio = transferCeilingRatio
      self.dataPath = dataPath
      self.attMTU = attMTU
      self.l2capPSM = l2capPSM
      self.l2capMTU = l2capMTU
      self.l2capReceiveMTU = l2capReceiveMTU
      self.phy = phy
      self.connectionInterval = connectionInterval
      self.peripheralLatency = peripheralLatency
      self.supervisionTimeout = supervisionTimeout
      self.dataLengthTx = dataLengthTx
      self.dataLengthRx = dataLengthRx
      self.dataLengthTxTime = dataLengthTxTime
      self.dataLengthRxTime = dataLengthRxTime
    }
  }

  /// The last line of a push that failed, or whose activation the device deferred (its image
  /// validated and kept, exit code 16): the exit code and the explanation otactl prints.
  public struct Failed: Codable, Equatable, Sendable {
    public private(set) var event: String = "result"
    public private(set) var ok: Bool = false
    public let exitCode: Int
    public let error: String
    public let seconds: Double
    public let resumedFrom: [Int]
    public let lastOutcome: Nullable<Outcome>
    /// The activation the device deferred (kept, exit code 16) or declined (exit code 17).
    public let activation: Activation?

    public init(
      exitCode: Int,
      error: String,
      seconds: Double,
      resumedFrom: [Int],
      lastOutcome: Nullable<Outcome>,
      activation: Activation? = nil
    ) {
      self.activation = activation
      self.exitCode = exitCode
      self.error = error
      self.seconds = seconds
      self.resumedFrom = resumedFrom
      self.lastOutcome = lastOutcome
    }
  }

  /// An update's outcome as Info reports it (the failed result's `lastOutcome`).
  public struct Outcome: Codable, Equatable, Sendable {
    public let result: String
    public let from: String
    public let to: String
    public let reason: String
    public let attemptsUsed: Int

    public init(result: String, from: String, to: String, reason: String, attemptsUsed: Int) {
      self.result = result
      self.from = from
      self.to = to
      self.reason = reason
      self.attemptsUsed = attemptsUsed
    }
  }

  /// A value written as `null` when absent (where a script expects the key to be there), unlike
  /// Codable's default for optionals, which leaves the key out.
  public struct Nullable<Value: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    public let value: Value?

    public init(_ value: Value?) { self.value = value }

    public init(from decoder: any Decoder) throws {
      let container = try decoder.singleValueContainer()
      value = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      if let value { try container.encode(value) } else { try container.encodeNil() }
    }
  }
}
