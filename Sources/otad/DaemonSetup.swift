import ArgumentParser
import Logging
import OTABoot
import OTAConfiguration
import OTADaemon
import OTAFaults
import OTALink
import OTALogging
import OTANordicDFU
import OTASocketLink
import OTAStorage
import OTASystem
import OTATrust
import OTAWire

/// What otad's commands build from their parsed options: the configuration's checks, the image
/// policy, the link's conditions, the logging, the layout and the daemon.
enum DaemonSetup {
  /// Secure DFU's key, read now so that a missing or wrong one stops the start with its reason.
  static func secureDFUTrust(_ configuration: DaemonConfiguration) throws -> SecureDFUDevice.Trust? {
    do {
      return try configuration.secureDFUTrust { path in
        (try? FileSystem.readFile(path)).flatMap { String(validating: $0, as: UTF8.self) }
      }
    } catch {
      throw ValidationError("\(error)")
    }
  }

  /// The image policy: the trusted keys read from their files.
  static func imagePolicy(_ configuration: DaemonConfiguration) throws -> ImagePolicy {
    do {
      return try configuration.trust.imagePolicy { (path: String) -> (text: String, permissions: UInt32)? in
        guard let status = (try? FileSystem.status(ofPath: path)) ?? nil,
          let text = (try? FileSystem.readFile(path)).flatMap({ String(validating: $0, as: UTF8.self) })
        else { return nil }
        return (text, status.permissions)
      }
    } catch {
      throw ValidationError("\(error)")
    }
  }

  /// The simulated link's conditions on the device's side: any MTU up to 517 (as BlueZ), with each
  /// configured spec (`[link] conditions`, then `--link`) laid over the one before.
  static func linkConditions(_ configuration: DaemonConfiguration) throws(LinkSpecError) -> LinkConditions {
    var conditions = LinkConditions(mtu: ATTMTU.maximum.value)
    for spec in configuration.linkConditions { conditions = try LinkConditions(spec: spec, base: conditions) }
    return conditions
  }

  /// Logs go to standard error at the configured level: with sd-daemon(3) priorities when it is the
  /// journal's stream (JournalLogHandler), as swift-log's StreamLogHandler writes them otherwise.
  static func bootstrapLogging(_ configuration: DaemonConfiguration) {
    LoggingSystem.bootstrap { label in
      JournalLogHandler.standardError(label: label, level: configuration.logLevel)
    }
  }

  /// Where the slots and the state live, as configured; a usage error (exit 64) when incomplete.
  static func layout(_ configuration: DaemonConfiguration) throws -> DeviceLayout {
    do {
      return try DeviceLayout(parsing: configuration)
    } catch {
      throw ValidationError("\(error)")
    }
  }

  /// The daemon as configured: its storage, the one path that changes its boot state, its policy.
  static func daemon(_ configuration: DaemonConfiguration) throws -> Daemon {
    try Daemon(
      layout: layout(configuration), configuration: configuration, policy: imagePolicy(configuration))
  }

  /// Refuses slots that cannot serve (a directory, a file larger than the capacity, a missing file
  /// where the running firmware should be) and a state directory that is not a directory, before
  /// anything is created or changed.
  static func checkStorage(_ layout: DeviceLayout, boot: BootConfiguration) throws {
    let state = layout.stateDirectory
    let stateKind = (try? FileSystem.kind(ofPath: state)) ?? nil
    let stateExists = stateKind != nil
    if let stateKind, stateKind != .directory {
      throw ValidationError(
        "the state directory \(state) is not a directory: remove that file or give another path "
          + "(--state-dir or [state] directory)")
    }
    do {
      try layout.checkSlots(boot: boot, stateExists: stateExists)
    } catch {
      let slot = error.slotPath == layout.slots.b && layout.slots.a != layout.slots.b ? "b" : "a"
      throw ValidationError("slot \(slot.uppercased()): \(error) (--slot-\(slot) or [slots] \(slot))")
    }
  }
}
