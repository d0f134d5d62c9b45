/// A push as the page draws it, reduced from otactl's JSON lines: the phases on a timeline, the
/// committed offset, throughput samples, resumes and the result. Bounded: at most `sampleLimit`
/// samples (older ones thinned), whatever the image's size.
public struct PushProgress: Codable, Equatable, Sendable {
  public struct PhaseSpan: Codable, Equatable, Sendable {
    public var name: String
    public var start: Double
    public var end: Double?
  }

  public struct Result: Codable, Equatable, Sendable {
    public var ok: Bool
    public var exitCode: Int
    public var error: String?
  }

  public static let sampleLimit = 240

  /// What the lab pushed ("push v2", ...), the image, its size and version.
  public var label: String
  public var image = ""
  public var size = 0
  public var version = ""
  public var link = ""
  public var phase = "idle"
  public var phases: [PhaseSpan] = []
  public var committed = 0
  public var total = 0
  public var bytesOnAir = 0
  /// How the push sent its bytes ("plain", "delta", ...) and what plain chunks would have sent: from
  /// the result line of a push that succeeded (nil before and for a failed one).
  public var transferMode: String?
  public var plainBytesOnAir: Int?
  /// Seconds since the push started.
  public var elapsed = 0.0
  /// [seconds, committed bytes, bytes on air] as the device acknowledged windows.
  public var samples: [[Double]] = []
  public var resumes: [Int] = []
  /// When each resume came, in seconds on the push's timeline (beside `resumes`' offsets).
  public var resumeTimes: [Double] = []
  public var result: Result?
  /// otactl was restarted (a dropped link or a new loss): the lines go on from the same push.
  public var restarts = 0

  public init(label: String) { self.label = label }

  public var running: Bool { result == nil }

  public mutating func apply(_ line: PushLine) {
    switch line {
    case .start(let image, let size, let version, let link):
      self.image = image
      self.size = size
      self.version = version
      self.link = link
    case .phase(let name, let t):
      let at = offset(t)
      if let last = phases.indices.last, phases[last].end == nil { phases[last].end = at }
      if name != "finished" { phases.append(PhaseSpan(name: name, start: at, end: nil)) }
      phase = name
      elapsed = max(elapsed, at)
    case .progress(let committed, let total, let bytesOnAir, let t):
      let at = offset(t)
      self.committed = committed
      self.total = total
      // otactl's progress lines after the transfer (VALIDATE, ACTIVATE, the trial) say 0 bytes on
      // air: what was sent never shrinks, so the largest figure stays.
      self.bytesOnAir = max(self.bytesOnAir, restartedAir + bytesOnAir)
      elapsed = max(elapsed, at)
      addSample([at, Double(committed), Double(self.bytesOnAir)])
    case .resume(let offset):
      resumes.append(offset)
      resumeTimes.append(elapsed)
    case .result(let ok, let exitCode, let error, let seconds, let air):
      let at = offset(seconds)
      if let air {
        // The result counts every data-write byte of this otactl; earlier ones (a dropped link) add.
        bytesOnAir = restartedAir + air.bytesOnAir
        transferMode = air.transferMode
        plainBytesOnAir = air.plainBytesOnAir
      }
      if let last = phases.indices.last, phases[last].end == nil { phases[last].end = at }
      elapsed = max(elapsed, at)
      // otactl's exit 16: the device kept the activation (docs/OTACTL.md); not a failure.
      phase = ok ? "succeeded" : exitCode == 16 ? "deferred" : "failed"
      result = Result(ok: ok, exitCode: exitCode, error: error)
    }
  }

  /// otactl starts again (the lab dropped its link): its clock starts at zero, so later times are
  /// counted from here; the push has not ended.
  public mutating func restarted() {
    restarts += 1
    base = elapsed
    restartedAir = bytesOnAir
    if let last = phases.indices.last, phases[last].end == nil { phases[last].end = elapsed }
  }

  /// Where the current otactl's time starts on the push's timeline.
  private var base = 0.0
  private var restartedAir = 0

  private func offset(_ t: Double) -> Double { base + max(0, t) }

  private mutating func addSample(_ sample: [Double]) {
    samples.append(sample)
    if samples.count > Self.sampleLimit {
      // Every other of the older half goes: the recent past stays fine-grained.
      let half = samples.count / 2
      samples = samples[..<half].enumerated().filter { $0.offset % 2 == 0 }.map(\.element) + samples[half...]
    }
  }

  enum CodingKeys: String, CodingKey {
    case label, image, size, version, link, phase, phases, committed, total, bytesOnAir, transferMode
    case plainBytesOnAir, elapsed, samples
    case resumes, resumeTimes, result, restarts
  }
}
