import OTASystem

/// Why a storage operation failed. Every case reaches the central as status 0x0B (storage error),
/// except `tooLarge`, which is 0x05.
public enum StorageError: Error, Equatable, Sendable {
  /// A system call failed with `errno` (`.io`, `.noSpace`, ...).
  case system(operation: String, path: String, errno: Errno)
  /// A write stored fewer bytes than asked (and retrying made no progress).
  case shortWrite(expected: Int, written: Int)
  /// A read or write outside the slot.
  case outOfBounds(offset: UInt64, count: Int, capacity: UInt64)
  /// An image larger than the slot that would hold it.
  case tooLarge(size: UInt64, capacity: UInt64)
  /// Somebody asked to write the slot the device is running from. Never allowed.
  case runningSlotIsReadOnly(String)
  /// A slot's backing file or device is missing or is of the wrong kind.
  case unusableSlot(path: String, reason: String)
  /// The bootloader's pointer could not be read or changed (a backend tool failed).
  case bootloader(String)
  /// Fault injection only: the simulated power was cut; nothing works until the medium reboots.
  case powerCut
}
