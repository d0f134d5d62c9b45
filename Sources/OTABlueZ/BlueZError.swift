import OTADBus

/// What a failed call to bluetoothd means to the central, parsed once from the D-Bus error name
/// (`org.bluez.Error.*`, `org.freedesktop.DBus.Error.*`). Decisions are taken on the case; the
/// message travels beside it for the log only.
public enum BlueZError: Equatable, Sendable {
  /// `org.bluez.Error.InProgress`: the same operation is already under way (a Connect, a discovery).
  case inProgress
  /// `org.bluez.Error.AlreadyConnected`.
  case alreadyConnected
  /// The link is down or going down: `org.bluez.Error.NotConnected`, and BlueZ's GATT client's
  /// `org.bluez.Error.Failed` "Not connected" (src/gatt-client.c answers StartNotify, AcquireWrite,
  /// ReadValue and WriteValue that way when the device has no ATT channel).
  case notConnected
  /// `org.bluez.Error.Failed` for any other reason (an ATT error, a refused connection).
  case failed
  /// `org.bluez.Error.NotPermitted`: e.g. AcquireWrite on a characteristic without write-without-response.
  case notPermitted
  /// `org.bluez.Error.NotSupported`.
  case notSupported
  /// `org.bluez.Error.NotAuthorized`, `.NotPaired`, `.AuthenticationFailed`: the device wants pairing.
  case notAuthorized
  /// `org.bluez.Error.InvalidOffset`: a read past the end of a value.
  case invalidOffset
  /// `org.bluez.Error.InvalidArguments`, `.InvalidValueLength`, `org.freedesktop.DBus.Error.InvalidArgs`.
  case invalidArguments
  /// `org.bluez.Error.DoesNotExist`, `org.freedesktop.DBus.Error.UnknownObject`, `.UnknownMethod`:
  /// the object (device, characteristic) is gone.
  case unknownObject
  /// `org.bluez.Error.NotReady`: the adapter is off.
  case notReady
  /// `org.freedesktop.DBus.Error.NoReply`: bluetoothd did not answer in time.
  case noReply
  /// The bus connection is gone, or bluetoothd is not on it (`Disconnected`, `ServiceUnknown`,
  /// `NameHasNoOwner`).
  case unreachable
  /// Any other error name.
  case other(String)

  /// The case an error reply's name stands for.
  public init(_ error: DBusError) {
    self = Self.byName[error.name] ?? .other(error.name)
    if self == .failed, error.message.lowercased() == "not connected" { self = .notConnected }
  }

  private static let byName: [String: BlueZError] = [
    "org.bluez.Error.InProgress": .inProgress,
    "org.bluez.Error.AlreadyConnected": .alreadyConnected,
    "org.bluez.Error.NotConnected": .notConnected,
    "org.bluez.Error.Failed": .failed,
    "org.bluez.Error.NotPermitted": .notPermitted,
    "org.bluez.Error.NotSupported": .notSupported,
    "org.bluez.Error.NotAuthorized": .notAuthorized,
    "org.bluez.Error.NotPaired": .notAuthorized,
    "org.bluez.Error.AuthenticationFailed": .notAuthorized,
    "org.bluez.Error.InvalidOffset": .invalidOffset,
    "org.bluez.Error.InvalidArguments": .invalidArguments,
    "org.bluez.Error.InvalidValueLength": .invalidArguments,
    "org.bluez.Error.DoesNotExist": .unknownObject,
    "org.bluez.Error.NotReady": .notReady,
    DBusError.Name.invalidArgs: .invalidArguments,
    DBusError.Name.unknownObject: .unknownObject,
    DBusError.Name.unknownMethod: .unknownObject,
    DBusError.Name.noReply: .noReply,
    DBusError.Name.disconnected: .unreachable,
    DBusError.Name.serviceUnknown: .unreachable,
    "org.freedesktop.DBus.Error.NameHasNoOwner": .unreachable,
  ]
}
