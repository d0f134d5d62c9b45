import ArgumentParser
import OTACentral

extension ExitCode {
  /// The exit code for one of otactl's statuses (`ExitStatus`): the only way otactl picks a code.
  init(_ status: ExitStatus) { self.init(status.rawValue) }
}
