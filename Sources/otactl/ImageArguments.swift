import ArgumentParser
import OTATrust

extension SigningAlgorithm: ExpressibleByArgument {}

/// `image keygen --type`: a signing key (ed25519, ecdsa-p256) or a device key for encrypted images
/// (x25519, rsa-2048; an ecdsa-p256 key serves either way), named as `imgtool keygen -t` names them;
/// aes-kw, a shared AES key-wrap key (MCUboot's ENC_KW), which imgtool does not make.
enum KeyType: String, ExpressibleByArgument, CaseIterable {
  case ed25519
  case ecdsaP256 = "ecdsa-p256"
  case x25519
  case rsa2048 = "rsa-2048"
  case aesKW = "aes-kw"
}

extension PublicKeyFormat: ExpressibleByArgument {}

extension SecurityCounter: ExpressibleByArgument {
  public init?(argument: String) { self.init(text: argument) }
}

/// An unsigned number given as decimal or `0x…` hex (also `0o…`, `0b…`), as imgtool takes sizes
/// and addresses. Range checks belong to whoever uses it, so their messages can say why.
struct NumberArgument: ExpressibleByArgument, CustomStringConvertible {
  let value: UInt64

  init(_ value: UInt64) { self.value = value }

  init?(argument: String) {
    guard let value = NumberText.unsigned(argument) else { return nil }
    self.value = value
  }

  var description: String { "0x" + String(value, radix: 16) }
  var defaultValueDescription: String { description }
}
