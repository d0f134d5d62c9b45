import ArgumentParser
import OTACentral

extension ExitCode {
  /// The exit code for one of otactl's statuses (`OtactlExitCode`): the only way otactl picks a code.
  init(_ status: OtactlExitCode) { self.init(status.rawValue) }
}
