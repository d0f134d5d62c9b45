import ArgumentParser
import Logging
import OTAConfiguration
import OTADaemon

/// `--log-level`: the commands that log (`run`, `boot`).
struct LogOptions: ConfigurationOptions {
  @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
  var logLevel: String?

  func apply(to configuration: inout DaemonConfiguration) throws {
    guard let logLevel else { return }
    guard let level = Logger.Level(rawValue: logLevel) else {
      throw ValidationError(
        "--log-level \(logLevel): use trace, debug, info, notice, warning, error or critical")
    }
    configuration.logLevel = level
  }
}
