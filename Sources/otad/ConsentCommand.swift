import ArgumentParser
import OTADaemon
import OTAEngine
import OTAReceiverHost
import OTAStorage
import OTASystem
import OTAWire

struct ConsentCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "consent",
    abstract: "Answer for the device's owner: accept, postpone or decline the update that waits.",
    discussion: """
      With [activation] require-consent (or --require-consent), a validated update waits for this
      answer before it activates. accept lets it go ahead (an update lock may still hold it);
      postpone holds it --for a while or --until a time; decline drops the staged image. A
      security update (its security counter above the running image's) may be postponed, not
      declined, and goes ahead once the maximum deferral has passed. The answer is about one
      version: the validated image's, or --version's (to answer ahead of a transfer).
      """)

  enum Decision: String, ExpressibleByArgument, CaseIterable {
    case accept, postpone, decline
  }

  @Argument(help: "accept, postpone or decline.")
  var decision: Decision

  @Option(
    name: .customLong("for"),
    help: ArgumentHelp("With postpone: for how long, e.g. 4h or 2d.", valueName: "duration"))
  var postponeFor: String?

  @Option(help: ArgumentHelp("With postpone: until when, in seconds since 1970 UTC.", valueName: "seconds"))
  var until: Int64?

  @Option(
    name: .customLong("image-version"),
    help: "The version the answer is about (default: the validated image's).")
  var imageVersion: String?

  @OptionGroup(title: "Storage") var storage: StorageOptions
  @OptionGroup(title: "Images") var images: ImageOptions
  @OptionGroup(title: "Activation") var activation: ActivationOptions

  func validate() throws {
    if decision == .postpone, (postponeFor == nil) == (until == nil) {
      throw ValidationError(
        "postpone needs how long: give --for (e.g. 4h) or --until (seconds since 1970 UTC)")
    }
    if decision != .postpone, postponeFor != nil || until != nil {
      throw ValidationError("--for and --until go with postpone only")
    }
  }

  func run() throws {
    let daemon = try DaemonSetup.daemon(try storage.configuration(images, activation))
    let now = Int64(ProcessEnvironment.wallClockMicroseconds / 1_000_000)
    let journal = try DeviceStatus.read(daemon.storage).transfer.value
    let version: Version
    if let imageVersion {
      version = try DaemonConfiguration.version(imageVersion)
    } else if let journal, journal.state == .validated {
      version = journal.version
    } else {
      throw ValidationError(
        "nothing awaits consent: no validated image in \(daemon.layout.stateDirectory). "
          + "Give --image-version to answer ahead of a transfer.")
    }
    let kept = (try daemon.storage.records.load(ActivationRecords.activationName)).flatMap(
      ActivationRecords.decodeActivation)
    if decision == .decline, let kept, kept.version == version, kept.security {
      throw ValidationError(
        "\(version) is a security update: it may be postponed (otad consent postpone --for ...), not declined; "
          + "it goes ahead once the maximum deferral has passed")
    }
    var until = self.until
    if let postponeFor { until = now + (try DaemonConfiguration.duration(postponeFor)).components.seconds }
    let answer = ConsentAnswer(
      version: version, decision: ConsentAnswer.Decision(rawValue: decision.rawValue) ?? .accept,
      until: until,
      at: now)
    try daemon.storage.records.replace(ActivationRecords.consentName, with: ActivationRecords.encode(answer))
    switch decision {
    case .accept:
      print("accepted \(version): the device activates it within a second, unless an update lock holds it")
    case .postpone: print("postponed \(version) for \((until ?? now) - now) s")
    case .decline: print("declined \(version): the device drops the staged image within a second")
    }
  }
}
