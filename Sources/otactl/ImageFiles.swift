import Foundation
import OTATrust

/// Reading inputs and writing outputs for `otactl image`: every failure is one readable line.
enum ImageFiles {
  struct Failure: Error {
    let message: String
  }

  static func read(_ path: String, what: String) throws(Failure) -> [UInt8] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw Failure(message: "the \(what) \(path) does not exist")
    }
    guard !isDirectory.boolValue else { throw Failure(message: "the \(what) \(path) is a directory") }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw Failure(message: "cannot read the \(what) \(path) (permissions?)")
    }
    return [UInt8](data)
  }

  /// A private key (PKCS#8 PEM, as imgtool and `otactl image keygen` write it).
  static func signingKey(_ path: String) throws(Failure) -> ImageSigningKey {
    let bytes = try read(path, what: "key file")
    do {
      return try ImageSigningKey(pem: String(decoding: bytes, as: UTF8.self))
    } catch {
      throw Failure(message: "\(path): \(error)")
    }
  }

  /// A public key, or a private key whose public half is taken.
  static func publicKey(_ path: String) throws(Failure) -> ImagePublicKey {
    let bytes = try read(path, what: "key file")
    do {
      return try ImagePublicKey(pem: String(decoding: bytes, as: UTF8.self))
    } catch {
      throw Failure(message: "\(path): \(error)")
    }
  }

  /// Writes the whole file or nothing (a temporary file renamed over `path`), like imgtool
  /// replacing an existing output.
  static func writeImage(_ bytes: [UInt8], to path: String) throws(Failure) {
    do {
      try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw Failure(message: "cannot write \(path): \(error.localizedDescription)")
    }
  }

  /// Creates `path` with `mode` from the start (a private key is never readable by others, not even
  /// for a moment). Refuses an existing file unless `replace`; a replaced file is removed first so
  /// the new one gets `mode`, whatever the old one had.
  static func writeNew(_ text: String, to path: String, mode: mode_t, replace: Bool) throws(Failure) {
    if replace, unlink(path) != 0, errno != ENOENT {
      throw Failure(message: "cannot replace \(path): \(String(cString: strerror(errno)))")
    }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard descriptor >= 0 else {
      let reason = errno
      if reason == EEXIST { throw Failure(message: "\(path) exists; give --force to replace it") }
      throw Failure(message: "cannot create \(path): \(String(cString: strerror(reason)))")
    }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
      let result = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if result < 0, errno == EINTR { continue }
      guard result > 0 else {
        throw Failure(message: "cannot write \(path): \(String(cString: strerror(errno)))")
      }
      written += result
    }
    guard fsync(descriptor) == 0 else {
      throw Failure(message: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
  }
}
