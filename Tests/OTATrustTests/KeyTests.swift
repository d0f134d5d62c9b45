import Crypto
import Foundation
import OTATrust
import OTAWire
import Testing

@Suite("Signing and public keys")
struct KeyTests {
  /// KEYHASH of `keys/test-ed25519.pem` as `imgtool dumpinfo Images/mcuboot-ed25519-100KiB.bin` prints it.
  static let ed25519KeyHash = "b56e139585fd01dedea2b76fc4c33042719e9fbd7fac9d2775b75acde1f16424"

  @Test(arguments: [("test-ed25519", SigningAlgorithm.ed25519), ("test-ecdsa-p256", .ecdsaP256)])
  func readsImgtoolsKeysAndTheirPublicHalves(name: String, algorithm: SigningAlgorithm) throws {
    let privateText = try sampleText("keys/\(name).pem")
    let publicText = try sampleText("keys/\(name).pub.pem")
    let signingKey = try ImageSigningKey(pem: privateText)
    #expect(signingKey.algorithm == algorithm)
    let publicKey = try ImagePublicKey(pem: publicText)
    #expect(publicKey.algorithm == algorithm)
    #expect(signingKey.publicKey == publicKey)
    #expect(try ImagePublicKey(pem: privateText) == publicKey, "a private key file stands for its public key")
    #expect(publicKey.pem == publicText, "the PEM written here is imgtool getpub's, byte for byte")
    #expect(publicKey.keyHash == Array(SHA256.hash(data: publicKey.der)))
  }

  @Test func keyHashIsTheOneImgtoolWroteIntoTheSampleImage() throws {
    let publicKey = try ImagePublicKey(pem: sampleText("keys/test-ed25519.pub.pem"))
    #expect(Hex.string(publicKey.keyHash) == Self.ed25519KeyHash)
    #expect(try unprotectedValue(sampleFile("mcuboot-ed25519-100KiB.bin"), .keyHash) == publicKey.keyHash)
    #expect(publicKey.shortID == "b56e139585fd01de")
    let p256 = try ImagePublicKey(pem: sampleText("keys/test-ecdsa-p256.pub.pem"))
    #expect(try unprotectedValue(sampleFile("mcuboot-ecdsa-p256-1B.bin"), .keyHash) == p256.keyHash)
  }

  @Test(arguments: SigningAlgorithm.allCases)
  func generatedKeysRoundTripThroughPEM(_ algorithm: SigningAlgorithm) throws {
    let key = ImageSigningKey.generate(algorithm)
    #expect(key.algorithm == algorithm)
    #expect(key.pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
    let reread = try ImageSigningKey(pem: key.pem)
    #expect(reread.publicKey == key.publicKey)
    #expect(reread.pem == key.pem)
    #expect(try ImagePublicKey(pem: key.publicKey.pem) == key.publicKey)
    #expect(try ImagePublicKey(der: key.publicKey.der) == key.publicKey)
    #expect(ImageSigningKey.generate(algorithm).publicKey != key.publicKey, "two keys are not the same key")
  }

  @Test func ed25519KeysUseTheFixedDERShapes() throws {
    let key = ImageSigningKey.generate(.ed25519)
    let privateDER = try PEMBlock(text: key.pem).der
    #expect(privateDER.count == 48)
    #expect(
      privateDER.prefix(16) == [
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
      ])
    #expect(key.publicKey.der.count == 44)
    #expect(
      key.publicKey.der.prefix(12) == [
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
      ])
  }

  @Test(arguments: SigningAlgorithm.allCases)
  func signaturesVerifyWithTheirKeyOnly(_ algorithm: SigningAlgorithm) throws {
    let key = ImageSigningKey.generate(algorithm)
    let digest = SHA256.hash(data: Array("image".utf8))
    let signature = try key.sign(digest: digest)
    #expect(key.publicKey.isValidSignature(signature, digest: digest))
    #expect(!ImageSigningKey.generate(algorithm).publicKey.isValidSignature(signature, digest: digest))
    #expect(!key.publicKey.isValidSignature(signature, digest: SHA256.hash(data: Array("imagE".utf8))))
    var flipped = signature
    flipped[flipped.count / 2] ^= 0x01
    #expect(!key.publicKey.isValidSignature(flipped, digest: digest))
  }

  @Test func refusesKeysItCannotSignWith() throws {
    let publicText = try sampleText("keys/test-ed25519.pub.pem")
    #expect(throws: KeyError.unsupported("this is a public key; signing needs the private key file")) {
      try ImageSigningKey(pem: publicText)
    }
    #expect(
      throws: KeyError.unsupported(
        "the private key is password-protected; give an unencrypted PKCS#8 key (imgtool keygen without --password)"
      )
    ) {
      try ImageSigningKey(pem: PEMBlock(label: "ENCRYPTED PRIVATE KEY", der: [0x30, 0x00]).text)
    }
    #expect(
      throws: KeyError.unsupported("the private key is RSA; only Ed25519 and ECDSA P-256 keys are supported")
    ) {
      try ImageSigningKey(pem: PEMBlock(label: "RSA PRIVATE KEY", der: [0x30, 0x00]).text)
    }
    #expect(throws: KeyError.notPEM("no '-----BEGIN ...-----' line")) { try ImageSigningKey(pem: "hello") }
  }

  @Test func namesTheAlgorithmOfKeysItDoesNotSupport() {
    let rsaOID: [UInt8] = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]
    let x25519OID: [UInt8] = [0x06, 0x03, 0x2b, 0x65, 0x6e]
    #expect(
      throws: KeyError.unsupported("the public key is RSA; only Ed25519 and ECDSA P-256 keys are supported")
    ) {
      try ImagePublicKey(der: [0x30, 0x0f, 0x30, 0x0d] + rsaOID + [0x05, 0x00])
    }
    #expect(
      throws: KeyError.unsupported(
        "the public key is X25519 (an encryption key, not a signing key); only Ed25519 and ECDSA P-256 keys are supported"
      )
    ) {
      try ImagePublicKey(
        der: [0x30, 0x2a, 0x30, 0x05] + x25519OID + [0x03, 0x21, 0x00] + [UInt8](repeating: 9, count: 32))
    }
    #expect(
      throws: KeyError.malformed("the public key is neither an Ed25519 nor an ECDSA P-256 key (3 DER bytes)")
    ) {
      try ImagePublicKey(der: [1, 2, 3])
    }
  }
}
