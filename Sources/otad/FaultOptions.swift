import ArgumentParser
import OTAConfiguration
import OTADaemon
import OTAFaults

/// Faults on demand at start (docs/APP-TESTING.md): `otad run`'s, for a test device only.
struct FaultOptions: ConfigurationOptions {
  @Flag(
    name: .customLong("allow-faults"),
    help: "Allow faults on demand (--fault, otad fault): for a test device only (docs/APP-TESTING.md).")
  var allowFaults = false

  @Option(
    name: .customLong("fault"),
    help: ArgumentHelp(
      "A fault to set at start, e.g. 'drop-link after=37%' (repeat for more; needs --allow-faults or [faults] allow).",
      valueName: "fault"))
  var faults: [String] = []

  func apply(to configuration: inout DaemonConfiguration) throws {
    if allowFaults { configuration.faultsAllowed = true }
    for line in faults {
      do {
        configuration.faults.append(try Fault(parsing: line))
      } catch {
        throw ValidationError("--fault '\(line)': \(error)")
      }
    }
  }
}
