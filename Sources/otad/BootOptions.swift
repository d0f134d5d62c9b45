import ArgumentParser
import OTABoot
import OTAConfiguration
import OTADaemon

/// How a trial boots and how the device restarts: the boot stage's part (`otad boot`, and `otad
/// run`, which runs the boot stage itself with [boot] stage = "daemon").
struct BootOptions: ConfigurationOptions {
  @Option(help: "Boots a trial may take before it rolls back (1 to 255).")
  var attempts: UInt8?

  @Option(help: "How the device restarts: reexec, reboot, or a command line.")
  var restart: String?

  func apply(to configuration: inout DaemonConfiguration) throws {
    if let attempts {
      guard attempts > 0 else { throw ValidationError("--attempts must be 1 to 255") }
      configuration.boot.attempts = attempts
    }
    if let restart { configuration.boot.restart = try BootConfiguration.restart(restart) }
  }
}

/// How a running trial is decided: `otad run`'s (it supervises the trial).
struct TrialOptions: ConfigurationOptions {
  @Option(
    name: .customLong("health-check"),
    help: "A command (run with /bin/sh -c) that decides a trial: exit 0 keeps the new firmware.")
  var healthCheck: String?

  @Option(
    help:
      "auto: a trial is confirmed by the health check, or when otad runs on it; manual: by mark-good or CONFIRM."
  )
  var confirm: String?

  @Option(name: .customLong("health-timeout"), help: "How long the health check may take, e.g. 60s.")
  var healthTimeout: String?

  @Option(
    name: .customLong("confirm-timeout"),
    help: "A trial nobody confirms by then restarts (a failed boot), e.g. 10min; 'never' to wait.")
  var confirmTimeout: String?

  func apply(to configuration: inout DaemonConfiguration) throws {
    if let healthCheck { configuration.boot.trial.healthCheck = healthCheck.isEmpty ? nil : healthCheck }
    if let confirm { configuration.boot.trial.manual = try BootConfiguration.manual(confirm) }
    if let healthTimeout {
      configuration.boot.trial.healthTimeout = try DaemonConfiguration.duration(healthTimeout)
    }
    if let confirmTimeout {
      configuration.boot.trial.confirmTimeout =
        confirmTimeout == "never" ? nil : try DaemonConfiguration.duration(confirmTimeout)
    }
  }
}
