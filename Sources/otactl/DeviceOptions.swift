import ArgumentParser
import Logging
import OTALink
import OTAWire

/// How to reach the device, shared by every subcommand.
struct DeviceOptions: ParsableArguments {
  @Option(help: "The device: the simulated link's socket path (what otad --socket names).")
  var device: String

  @Option(help: ArgumentHelp("Link conditions on the central's side.", discussion: LinkConditions.help))
  var link: String?

  @Flag(help: "Print JSON (one object per line while pushing) instead of text.")
  var json = false

  @Flag(name: .shortAndLong, help: "Log the conversation on standard error.")
  var verbose = false

  func conditions() throws -> LinkConditions {
    guard let link else { return LinkConditions() }
    do {
      return try LinkConditions(spec: link)
    } catch {
      throw ValidationError("--link: \(error)")
    }
  }

  func logger() -> Logger {
    var logger = Logger(label: "otactl") { label in StreamLogHandler.standardError(label: label) }
    logger.logLevel = verbose ? .debug : .warning
    return logger
  }
}

extension Version: ExpressibleByArgument {
  public init?(argument: String) { self.init(text: argument) }
}
