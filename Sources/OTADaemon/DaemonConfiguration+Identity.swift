import Logging
import OTALink
import OTASystem
import OTATrust

extension DaemonConfiguration {
  /// The identity otad serves in the Device Information Service: the configured model and hardware
  /// revision, and the configured serial or, without one, the machine's BlueOTA-specific ID
  /// (`MachineAppSpecificID`, from the machine-id at `machineIDPath`). A machine-id that is missing
  /// or unreadable is logged and the serial is "unknown".
  public func identity(machineIDPath: String = "/etc/machine-id", logger: Logger) -> DeviceIdentity {
    DeviceIdentity(
      serial: serial ?? Self.machineSerial(machineIDPath: machineIDPath, logger: logger), model: model,
      hardwareRevision: hardwareRevision)
  }

  /// The serial derived from the machine-id, or "unknown".
  static func machineSerial(machineIDPath: String, logger: Logger) -> String {
    let text: String?
    do {
      text = String(validating: try FileSystem.readFile(machineIDPath), as: UTF8.self)
    } catch {
      logger.warning(
        "no serial configured and \(machineIDPath) cannot be read (\(error)): the serial is \"unknown\"; set [device] serial or --serial"
      )
      return "unknown"
    }
    guard let machineID = text.flatMap(MachineAppSpecificID.machineID(text:)) else {
      logger.warning(
        "no serial configured and \(machineIDPath) holds no machine ID: the serial is \"unknown\"; set [device] serial or --serial"
      )
      return "unknown"
    }
    return MachineAppSpecificID.hex(machineID: machineID)
  }
}
