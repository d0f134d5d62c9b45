import Crypto
import OTAChecksum
import OTAWire

/// The single streaming pass of `ImageVerifier`: CRC32 of every byte, SHA-256 of MCUboot's hashed
/// range, and a comparison of the streamed header and TLV bytes with those decoded beforehand.
/// Holds one chunk at a time.
///
/// An encrypted image's payload is seen two ways in the same pass (`PayloadCipher`): the CRC32 is
/// of the bytes as sent (ciphertext), the SHA-256 of the plaintext, as MCUboot hashes it; the
/// slot may hold either, or plaintext up to a boundary while it is decrypted in place.
extension ImageVerifier {
  struct StreamedDigests {
    var crc32: UInt32
    /// CRC32 of the bytes as the slot holds them: `crc32` unless the payload is decrypted in place.
    var storedCRC32: UInt32 = 0
    /// Present for a decoded MCUboot image.
    var sha256: SHA256Digest?
    /// True when bytes streamed from the header or TLV range differ from those decoded earlier.
    var slotChanged: Bool
    /// Where the source returned fewer bytes than asked, breaking `ImageSource`'s contract; the
    /// stream stops there.
    var shortReadAt: UInt64? = nil
    /// The SHA-256 of every byte, when asked for (`sealing`).
    var seal: [UInt8]? = nil

    static func compute<Source: ImageSource>(
      reader: Source, size: UInt64, chunkSize: Int, inspection: Inspection, sealing: Bool = false,
      cipher: PayloadCipher? = nil
    ) throws(Source.ReadError) -> StreamedDigests {
      var crc = CRC32()
      // The slot's own bytes differ from the bytes as sent only under a cipher: a second CRC32 then.
      var stored: CRC32? = cipher == nil ? nil : CRC32()
      var whole: SHA256? = sealing ? SHA256() : nil
      var hasher: SHA256?
      var hashedRange: Range<UInt64> = 0..<0
      // Bytes decoded before streaming, each with the range of the slot it came from.
      var decoded: [(range: Range<UInt64>, bytes: [UInt8])] = []
      if case .mcuboot(let layout, let header, let tlvAreas) = inspection {
        hasher = SHA256()
        hashedRange = layout.hashedRange
        decoded = [
          (0..<UInt64(header.count), header),
          (layout.header.tlvOffset..<layout.header.tlvOffset + UInt64(tlvAreas.count), tlvAreas),
        ]
      }
      var slotChanged = false
      var offset: UInt64 = 0
      while offset < size {
        let count = Int(min(UInt64(chunkSize), size - offset))
        let chunk = try reader.read(at: offset, count: count)
        // A reader that returns fewer bytes than asked breaks `ImageSource`'s contract; stopping
        // here keeps the offsets below honest (and the loop finite).
        guard chunk.count == count else {
          return StreamedDigests(
            crc32: crc.value, storedCRC32: stored?.value ?? crc.value, sha256: nil, slotChanged: slotChanged,
            shortReadAt: offset)
        }
        let chunkRange = offset..<offset + UInt64(count)
        chunk.withUnsafeBytes { buffer in
          stored?.update(buffer)
          whole?.update(bufferPointer: buffer)
        }
        let (sent, plain) = cipher.map { $0.views(of: chunk, at: chunkRange.lowerBound) } ?? (chunk, chunk)
        sent.withUnsafeBytes { crc.update($0) }
        if let hashed = local(hashedRange, in: chunkRange) {
          plain.withUnsafeBytes {
            hasher?.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[hashed]))
          }
        }
        for (range, bytes) in decoded {
          guard let inChunk = local(range, in: chunkRange) else { continue }
          let start = Int(chunkRange.lowerBound + UInt64(inChunk.lowerBound) - range.lowerBound)
          if !chunk[inChunk].elementsEqual(bytes[start..<start + inChunk.count]) { slotChanged = true }
        }
        offset = chunkRange.upperBound
      }
      return StreamedDigests(
        crc32: crc.value, storedCRC32: stored?.value ?? crc.value, sha256: hasher.map { $0.finalize() },
        slotChanged: slotChanged,
        seal: whole.map { Array($0.finalize()) })
    }

    /// The part of `range` that lies in `chunk`, as indices into the chunk's bytes; nil if none.
    private static func local(_ range: Range<UInt64>, in chunk: Range<UInt64>) -> Range<Int>? {
      let lower = max(range.lowerBound, chunk.lowerBound)
      let upper = min(range.upperBound, chunk.upperBound)
      guard lower < upper else { return nil }
      return Int(lower - chunk.lowerBound)..<Int(upper - chunk.lowerBound)
    }
  }
}
