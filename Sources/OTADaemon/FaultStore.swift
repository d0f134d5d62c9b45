import Logging
import OTAFaults
import OTASystem

/// The faults' file in the state directory (`faults`): the book between restarts, so that a fault
/// that fires once fires once even when it restarts the device. A missing file is no faults; a
/// damaged one is set aside with a warning (the configuration's faults still hold). Faults are a
/// test aid: a failure to save one is logged, never a reason to stop serving.
struct FaultStore {
  static let fileName = "faults"
  let path: String

  init(stateDirectory: String) { path = stateDirectory + "/" + Self.fileName }

  /// The most a file of `FaultBook.capacity` faults can take; a larger one is damaged, not read.
  static let maxBytes: UInt64 = 64 * 1024

  func load(logger: Logger) -> FaultBook {
    guard let status = try? FileSystem.status(ofPath: path) else { return FaultBook() }
    guard status.size <= Self.maxBytes, let bytes = try? FileSystem.readFile(path) else {
      logger.warning(
        "the faults file \(path) is not a faults file (\(status.size) bytes, or unreadable): starting from the configuration's faults"
      )
      return FaultBook()
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      logger.warning("the faults file \(path) is not text: starting from the configuration's faults")
      return FaultBook()
    }
    do {
      return try FaultBook(stored: text)
    } catch {
      logger.warning(
        "the faults file \(path) is damaged (\(error)): starting from the configuration's faults")
      return FaultBook()
    }
  }

  func save(_ book: FaultBook, logger: Logger) {
    do {
      try DurableWrite.replace(path, with: Array(book.encoded.utf8), mode: 0o600)
    } catch {
      logger.error("could not save the faults (\(error)): a fault that fired may fire again after a restart")
    }
  }
}
