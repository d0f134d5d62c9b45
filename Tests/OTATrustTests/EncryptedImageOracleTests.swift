import Foundation
import OTATestSupport
import OTATrust
import OTAWire
import Testing

/// The other direction of imgtool interop: images encrypted here (`MCUbootImageBuilder.encryptFor`,
/// what `otactl image create --encrypt` writes) opened by a second implementation of MCUboot's
/// unwrapping (bootutil's encrypted.c: ECIES with HKDF-SHA256 and an HMAC-SHA256 tag, or RSA-OAEP
/// with SHA-256; then AES-CTR from counter 0), written in Python on the `cryptography` library of
/// imgtool's own environment, and read by `imgtool dumpinfo`. imgtool itself has no decrypt command.
@Suite("encrypted images, opened by a second implementation")
struct EncryptedImageOracleTests {
  static let script = """
    struct, sys = __import__("struct"), __import__("sys")
    from cryptography.hazmat.primitives import hashes, hmac, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding, x25519
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    from cryptography.hazmat.primitives.keywrap import aes_key_unwrap
    image = open(sys.argv[1], "rb").read()
    text = open(sys.argv[2], "rb").read()
    key = serialization.load_pem_private_key(text, None) if text.startswith(b"-----") else __import__("base64").b64decode(text)
    magic, load, hdr, protected, size, flags = struct.unpack_from("<IIHHII", image, 0)
    assert magic == 0x96F3B83D
    keylen = 32 if flags & 0x08 else 16
    offset = hdr + size + protected
    info, total = struct.unpack_from("<HH", image, offset)
    assert info == 0x6907
    tlvs, p = {}, offset + 4
    while p < offset + total:
        kind, length = struct.unpack_from("<HH", image, p)
        tlvs[kind] = image[p + 4:p + 4 + length]
        p += 4 + length
    if 0x31 in tlvs:
        content = aes_key_unwrap(key, tlvs[0x31])
    elif 0x30 in tlvs:
        content = key.decrypt(tlvs[0x30], padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None))
    else:
        if 0x33 in tlvs:
            value, n = tlvs[0x33], 32
            shared = key.exchange(x25519.X25519PublicKey.from_public_bytes(value[:n]))
        else:
            value, n = tlvs[0x32], 65
            shared = key.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), value[:n]))
        derived = HKDF(hashes.SHA256(), keylen + 32, None, b"MCUBoot_ECIES_v1").derive(shared)
        tag, wrapped = value[n:n + 32], value[n + 32:]
        mac = hmac.HMAC(derived[keylen:], hashes.SHA256())
        mac.update(wrapped)
        mac.verify(tag)
        opener = Cipher(algorithms.AES(derived[:keylen]), modes.CTR(bytes(16))).decryptor()
        content = opener.update(wrapped) + opener.finalize()
    assert len(content) == keylen
    decryptor = Cipher(algorithms.AES(content), modes.CTR(bytes(16))).decryptor()
    sys.stdout.buffer.write(decryptor.update(image[hdr:hdr + size]) + decryptor.finalize())
    """

  @Test(arguments: EncryptionAlgorithm.allCases, [128, 256])
  func imagesEncryptedHereOpenWithMCUbootsAlgorithmElsewhere(_ algorithm: EncryptionAlgorithm, bits: Int)
    throws
  {
    let imgtool = try Imgtool.locate()
    let python = URL(fileURLWithPath: imgtool.executable).deletingLastPathComponent().appendingPathComponent(
      "python3")
    let folder = try TemporaryDirectory(label: "otatrust-oracle")
    defer { folder.remove() }
    let device = try ImageDecryptionKey.generate(algorithm)
    let payload = SeededGenerator.bytes(3001, seed: UInt64(bits))
    let image = try MCUbootImageBuilder(
      version: Version(major: 1, minor: 0, revision: 0), encryptFor: device.encryptionKey,
      encryptionKeyBits: bits
    ).build(payload: payload, signingKey: ImageSigningKey.generate(.ed25519))
    let imagePath = try folder.write(image, "image.bin")
    let keyPath = try folder.write(Array(device.pem.utf8), "device.pem")
    let scriptPath = try folder.write(Array(Self.script.utf8), "open.py")

    let process = Process()
    process.executableURL = python
    process.arguments = [scriptPath, imagePath, keyPath]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let opened = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
    let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(complaint)")
    #expect(
      opened == payload + [UInt8](repeating: 0, count: 16 - payload.count % 16), "the plaintext, padded")
    let dump = try imgtool.dumpinfo(imagePath)
    let header = try #require(dump["header"] as? [String: Any])
    #expect(header["flags"] as? Int == (bits == 256 ? 0x08 : 0x04), "\(header)")
    let tlvs = try #require((dump["tlv_area"] as? [String: Any])?["tlvs"] as? [[String: Any]])
    let names = tlvs.compactMap { $0["type_name"] as? String }
    #expect(names.first == "SHA256" && names.contains("ED25519"), "\(names)")
    #expect(
      names.last
        == ["x25519": "ENCX25519", "ecdsa-p256": "ENCEC256", "rsa-2048": "ENCRSA2048", "aes-kw": "ENCKW"][
          algorithm.rawValue])
  }
}
