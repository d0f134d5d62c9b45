/// The input's cpio "newc" layout, read apart from SWUArchive so that the two can disagree: each
/// entry's header offset, name bytes (without the NUL), data range and checksum field, up to and
/// including the trailer. Checks only what the layout needs (fields of 8 hex digits, lengths within
/// the input), not what makes an archive acceptable.
struct SWUArchiveWalk {
  struct Entry {
    var header: Int
    var name: [UInt8]
    var data: Range<Int>
    var checksum: UInt32
  }

  static func entries(_ bytes: [UInt8]) -> [Entry]? {
    var entries: [Entry] = []
    var offset = 0
    while offset + 110 <= bytes.count {
      var fields: [Int] = []
      for index in 0..<13 {
        let text = String(decoding: bytes[offset + 6 + index * 8..<offset + 14 + index * 8], as: UTF8.self)
        guard text.utf8.allSatisfy(isHexDigit), let value = Int(text, radix: 16) else { return nil }
        fields.append(value)
      }
      let nameStart = offset + 110
      let (fileSize, nameSize) = (fields[6], fields[11])
      guard nameSize >= 1, bytes.count - nameStart >= nameSize else { return nil }
      let name = Array(bytes[nameStart..<nameStart + nameSize - 1])
      let dataStart = (nameStart + nameSize + 3) & ~3
      guard dataStart <= bytes.count, bytes.count - dataStart >= fileSize else { return nil }
      entries.append(
        Entry(
          header: offset, name: name, data: dataStart..<dataStart + fileSize, checksum: UInt32(fields[12])))
      if name == Array("TRAILER!!!".utf8) { return entries }
      offset = (dataStart + fileSize + 3) & ~3
    }
    return nil
  }

  static func isHexDigit(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
  }
}
