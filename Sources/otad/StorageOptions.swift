import ArgumentParser
import OTAConfiguration
import OTADaemon
import OTALink
import OTASocketLink
import OTASystem

/// A group of otad's options that sets its part of the daemon's configuration, over the file's.
protocol ConfigurationOptions: ParsableArguments {
  func apply(to configuration: inout DaemonConfiguration) throws
}

/// Where the device keeps its things: the configuration file, the two slots, the state directory.
/// Every otad command that opens the device's storage names it this way.
struct StorageOptions: ConfigurationOptions {
  @Option(name: .long, help: "A TOML configuration file (see docs/OTAD.md); flags override it.")
  var config: String?

  @Option(name: .customLong("slot-a"), help: "Slot A: a regular file or a block device.")
  var slotA: String?

  @Option(name: .customLong("slot-b"), help: "Slot B: a regular file or a block device.")
  var slotB: String?

  @Option(help: "Capacity of a slot that is a regular file, e.g. 16MiB (block devices use their size).")
  var capacity: String?

  @Option(name: .customLong("state-dir"), help: "Where the journal and the boot state live.")
  var stateDir: String?

  func apply(to configuration: inout DaemonConfiguration) throws {
    if let slotA { configuration.slotA = slotA }
    if let slotB { configuration.slotB = slotB }
    if let capacity { configuration.slotCapacity = try DaemonConfiguration.byteSize(capacity) }
    if let stateDir { configuration.stateDirectory = stateDir }
  }

  /// The configuration file (`--config`), then these flags and each group's on top; a usage error
  /// (exit 64) that names the file or the flag when something is wrong.
  func configuration(_ groups: any ConfigurationOptions...) throws -> DaemonConfiguration {
    var configuration = try ConfigurationFile.read(config)
    do {
      try apply(to: &configuration)
      for group in groups { try group.apply(to: &configuration) }
    } catch let error as ValidationError {
      throw error
    } catch {
      throw ValidationError("\(error)")
    }
    return configuration
  }
}

/// `--config`: the TOML file read into the daemon's settings (the defaults without one).
enum ConfigurationFile {
  static func read(_ path: String?) throws -> DaemonConfiguration {
    guard let path else { return DaemonConfiguration() }
    guard let bytes = try? FileSystem.readFile(path), let text = String(validating: bytes, as: UTF8.self)
    else { throw ValidationError("cannot read the configuration file \(path)") }
    do {
      let configuration = try DaemonConfiguration(toml: text)
      _ = try DaemonSetup.linkConditions(configuration)
      return configuration
    } catch let error as LinkSpecError {
      throw ValidationError("\(path): [link] conditions: \(error)")
    } catch {
      throw ValidationError("\(path): \(error)")
    }
  }
}

/// `otad fault` needs the state directory alone (its fault control's socket is there): the file
/// or the flag that names it.
struct StateDirectoryOptions: ParsableArguments {
  @Option(name: .long, help: "A TOML configuration file (see docs/OTAD.md) that names the state directory.")
  var config: String?

  @Option(name: .customLong("state-dir"), help: "The running otad's state directory (its --state-dir).")
  var stateDir: String?

  /// `--state-dir`, else the configuration file's `[state] directory`.
  func stateDirectory() throws -> String {
    if let stateDir { return stateDir }
    guard let state = try ConfigurationFile.read(config).stateDirectory else {
      throw ValidationError(
        "a state directory is needed: --state-dir (or [state] directory), as otad run has it")
    }
    return state
  }
}
