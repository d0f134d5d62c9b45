import OTASystem
import OTATrust

/// Reading inputs and writing outputs for `otactl image`: every failure is one readable line.
enum ImageFiles {
  struct Failure: Error {
    let message: String
  }

  static func read(_ path: String, what: String) throws(Failure) -> [UInt8] {
    guard let kind = (try? FileSystem.kind(ofPath: path)) ?? nil else {
      throw Failure(message: "the \(what) \(path) does not exist")
    }
    guard kind != .directory else { throw Failure(message: "the \(what) \(path) is a directory") }
    guard let bytes = try? FileSystem.readFile(path) else {
      throw Failure(message: "cannot read the \(what) \(path) (permissions?)")
    }
    return bytes
  }

  /// A private key (PKCS#8 PEM, as imgtool and `otactl image keygen` write it).
  static func signingKey(_ path: String) throws(Failure) -> ImageSigningKey {
    try key(path) { text throws(KeyError) in try ImageSigningKey(pem: text) }
  }

  /// A device's public key for encrypted images, or its private key whose public half is taken.
  static func encryptionKey(_ path: String) throws(Failure) -> ImageEncryptionKey {
    try key(path) { text throws(KeyError) in try ImageEncryptionKey(keyFile: text) }
  }

  /// A device's private key for encrypted images.
  static func decryptionKey(_ path: String) throws(Failure) -> ImageDecryptionKey {
    try key(path) { text throws(KeyError) in try ImageDecryptionKey(keyFile: text) }
  }

  /// A public key, or a private key whose public half is taken.
  static func publicKey(_ path: String) throws(Failure) -> ImagePublicKey {
    try key(path) { text throws(KeyError) in try ImagePublicKey(pem: text) }
  }

  /// The key file at `path` read by `parse`; its failure named with the path.
  private static func key<Key>(_ path: String, _ parse: (String) throws(KeyError) -> Key) throws(Failure)
    -> Key
  {
    let bytes = try read(path, what: "key file")
    do {
      return try parse(String(decoding: bytes, as: UTF8.self))
    } catch {
      throw Failure(message: "\(path): \(error)")
    }
  }

  /// Writes the whole file or nothing, durably (OTASystem's durable write: a temporary file,
  /// fsynced, renamed over `path`, the directory fsynced), like imgtool replacing an existing output.
  static func writeImage(_ bytes: [UInt8], to path: String) throws(Failure) {
    do {
      try DurableWrite.replace(path, with: bytes)
    } catch {
      throw Failure(message: "cannot write \(path): \(error.operation) \(error.path): \(error.errno)")
    }
  }

  /// Writes `text` to `path` durably with `mode` from the start (a private key is never readable by
  /// others, not even for a moment: the temporary file is created afresh with `mode`). Refuses an
  /// existing file unless `replace`.
  static func writeNew(_ text: String, to path: String, mode: UInt32, replace: Bool) throws(Failure) {
    do {
      if !replace, try FileSystem.status(ofPath: path) != nil {
        throw Failure(message: "\(path) exists; give --force to replace it")
      }
      try FileSystem.unlinkIfPresent(path + DurableWrite.temporarySuffix)
      try DurableWrite.replace(path, with: Array(text.utf8), mode: mode)
    } catch let error as Failure {
      throw error
    } catch let error as SystemError {
      throw Failure(message: "cannot write \(path): \(error.operation) \(error.path): \(error.errno)")
    } catch {
      throw Failure(message: "cannot write \(path): \(error)")
    }
  }
}
