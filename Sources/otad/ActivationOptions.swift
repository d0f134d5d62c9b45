import ArgumentParser
import OTADaemon

/// The device's say over activations (docs/OTAD.md, "The device has a say"): consent, the maximum
/// deferral of a security update, where applications put their update locks.
struct ActivationOptions: ConfigurationOptions {
  @Flag(
    name: .customLong("require-consent"),
    help: "Keep a validated update until its owner consents (otad consent accept) instead of activating it.")
  var requireConsent = false

  @Option(
    name: .customLong("max-deferral"),
    help: ArgumentHelp(
      "How long a security update may be held back in all (locks, postponements, no answer), e.g. 7d (the default).",
      valueName: "duration"))
  var maxDeferral: String?

  @Option(
    name: .customLong("lock-dir"),
    help: ArgumentHelp(
      "Where applications put their update locks (default /run/blueota/locks).", valueName: "dir"))
  var lockDir: String?

  @Option(
    name: .customLong("activation-notify"),
    help: ArgumentHelp(
      "A command (sh -c) told of each change of a kept activation: an update awaits consent, is held, went ahead.",
      valueName: "command"))
  var activationNotify: String?

  func apply(to configuration: inout DaemonConfiguration) throws {
    if let activationNotify { configuration.activationNotify = activationNotify }
    if requireConsent { configuration.requireConsent = true }
    if let maxDeferral { configuration.maxDeferral = try DaemonConfiguration.duration(maxDeferral) }
    if let lockDir { configuration.lockDirectory = lockDir }
  }
}
