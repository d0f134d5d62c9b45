import Crypto
import Foundation
import OTATestSupport
import OTATrust
import OTAWire

func sampleFile(_ relativePath: String) throws -> [UInt8] {
  try RepositoryRoot.bytes("Images/\(relativePath)")
}

func sampleText(_ relativePath: String) throws -> String {
  String(decoding: try sampleFile(relativePath), as: UTF8.self)
}

/// Hand-assembled images for the cases no tool makes: the header, payload and protected TLVs are
/// given; `unprotected` gets the digest of those and returns the unprotected TLVs.
func assembleImage(
  payload: [UInt8], version: Version = Version(major: 1, minor: 0, revision: 0), headerSize: UInt16 = 32,
  protected: [MCUbootTLV] = [], unprotected: (SHA256Digest) throws -> [MCUbootTLV]
) throws -> [UInt8] {
  let protectedArea = protected.isEmpty ? nil : try MCUbootTLVArea(kind: .protected, entries: protected)
  let header = MCUbootHeader(
    headerSize: headerSize, protectedTLVSize: protectedArea?.totalLength ?? 0,
    imageSize: UInt32(payload.count), version: version)
  var image: [UInt8] = []
  header.append(to: &image)
  image += [UInt8](repeating: 0xff, count: Int(headerSize) - MCUbootHeader.byteCount)
  image += payload
  protectedArea?.append(to: &image)
  let digest = SHA256.hash(data: image)
  try MCUbootTLVArea(kind: .unprotected, entries: try unprotected(digest)).append(to: &image)
  return image
}

/// The image with its unprotected TLVs replaced by `transform` of them, sizes kept consistent.
func replacingUnprotectedTLVs(_ image: [UInt8], _ transform: ([MCUbootTLV]) -> [MCUbootTLV]) throws -> [UInt8]
{
  let layout = try MCUbootImageLayout(parsing: image)
  var result = Array(image[0..<Int(layout.header.hashedLength)])
  try MCUbootTLVArea(kind: .unprotected, entries: transform(layout.unprotectedTLVs)).append(to: &result)
  return result
}

/// The image with its SHA256 TLV set to the digest of its (possibly altered) hashed range: what an
/// attacker who changes bytes does so that only the signature can catch it.
func rehashed(_ image: [UInt8]) throws -> [UInt8] {
  let layout = try MCUbootImageLayout(parsing: image)
  let digest = Array(SHA256.hash(data: image[0..<Int(layout.header.hashedLength)]))
  return try replacingUnprotectedTLVs(image) { tlvs in
    tlvs.map { $0.type == .sha256 ? MCUbootTLV(type: .sha256, value: digest) : $0 }
  }
}

/// The TLV of `type` in the unprotected area, decoded from the image.
func unprotectedValue(_ image: [UInt8], _ type: MCUbootTLVType) throws -> [UInt8]? {
  try MCUbootImageLayout(parsing: image).unprotectedArea.values(of: type).first
}

/// Where two byte sequences first differ (relative offset; the shorter one's length when one is a
/// prefix of the other), or nil when they are equal: a readable failure instead of two byte dumps.
func firstDifference(_ first: some Collection<UInt8>, _ second: some Collection<UInt8>) -> Int? {
  for (offset, (a, b)) in zip(first, second).enumerated() where a != b { return offset }
  return first.count == second.count ? nil : min(first.count, second.count)
}
