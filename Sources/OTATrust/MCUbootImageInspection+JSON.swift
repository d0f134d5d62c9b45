import OTAWire

/// `otactl image inspect --json`: numbers as numbers, bytes as lowercase hex, and the two checks as
/// `{"result": ..., ...}` objects:
///
///     {"ok": true, "fileLength": 103068, "trailingBytes": 0, "version": "2.0.1+7",
///      "securityCounter": 3 (or null),
///      "header": {"magic": "0x96f3b83d", "loadAddress": 0, "headerSize": 512, "imageSize": 102400,
///                 "protectedTLVSize": 12, "flags": 0, "flagNames": []},
///      "tlvs": [{"area": "protected", "offset": 102912, "type": 80, "name": "SEC_CNT", "length": 4,
///                "value": "03000000"}, ...],
///      "hash": {"result": "matches" | "mismatch" | "uncheckable", "digest", "recorded", "computed", "reason"},
///      "signature": {"result": "not-requested" | "verified" | "rejected" | "skipped",
///                    "algorithm", "keyHash", "reason"}}
extension MCUbootImageInspection: Encodable {
  private enum Key: String, CodingKey {
    case ok, fileLength, trailingBytes, version, securityCounter, header, tlvs, hash, signature
    case magic, loadAddress, headerSize, imageSize, protectedTLVSize, flags, flagNames
    case area, offset, type, name, length, value
    case result, digest, recorded, computed, reason, algorithm, keyHash, encryption
  }

  public func encode(to encoder: any Encoder) throws {
    var root = encoder.container(keyedBy: Key.self)
    try root.encode(isGood, forKey: .ok)
    try root.encode(fileLength, forKey: .fileLength)
    try root.encode(trailingByteCount, forKey: .trailingBytes)
    try root.encode("\(header.version)", forKey: .version)
    try root.encode(securityCounter, forKey: .securityCounter)
    if let decryption {
      // Only for an encrypted image: whether the given key opened it.
      var object = root.nestedContainer(keyedBy: Key.self, forKey: .encryption)
      switch decryption {
      case .success(let algorithm):
        try object.encode("opened", forKey: .result)
        try object.encode(algorithm.rawValue, forKey: .algorithm)
      case .failure(let problem):
        try object.encode("not opened", forKey: .result)
        try object.encode(problem.description, forKey: .reason)
      }
    }

    var headerObject = root.nestedContainer(keyedBy: Key.self, forKey: .header)
    try headerObject.encode("0x96f3b83d", forKey: .magic)
    try headerObject.encode(header.loadAddress, forKey: .loadAddress)
    try headerObject.encode(header.headerSize, forKey: .headerSize)
    try headerObject.encode(header.imageSize, forKey: .imageSize)
    try headerObject.encode(header.protectedTLVSize, forKey: .protectedTLVSize)
    try headerObject.encode(header.flags.rawValue, forKey: .flags)
    try headerObject.encode(header.flags.names, forKey: .flagNames)

    var tlvArray = root.nestedUnkeyedContainer(forKey: .tlvs)
    for entry in entries {
      var object = tlvArray.nestedContainer(keyedBy: Key.self)
      try object.encode("\(entry.area)", forKey: .area)
      try object.encode(entry.offset, forKey: .offset)
      try object.encode(entry.type.rawValue, forKey: .type)
      try object.encode(entry.type.name, forKey: .name)
      try object.encode(entry.value.count, forKey: .length)
      try object.encode(Hex.string(entry.value), forKey: .value)
    }

    var hashObject = root.nestedContainer(keyedBy: Key.self, forKey: .hash)
    switch hash {
    case .matches(let digest):
      try hashObject.encode("matches", forKey: .result)
      try hashObject.encode(Hex.string(digest), forKey: .digest)
    case .mismatch(let recorded, let computed):
      try hashObject.encode("mismatch", forKey: .result)
      try hashObject.encode(Hex.string(recorded), forKey: .recorded)
      try hashObject.encode(Hex.string(computed), forKey: .computed)
    case .uncheckable(let reason):
      try hashObject.encode("uncheckable", forKey: .result)
      try hashObject.encode(reason, forKey: .reason)
    }

    var signatureObject = root.nestedContainer(keyedBy: Key.self, forKey: .signature)
    switch signature {
    case .notRequested:
      try signatureObject.encode("not-requested", forKey: .result)
    case .verified(let key):
      try signatureObject.encode("verified", forKey: .result)
      try signatureObject.encode(key.algorithm.rawValue, forKey: .algorithm)
      try signatureObject.encode(Hex.string(key.keyHash), forKey: .keyHash)
    case .rejected(let reason):
      try signatureObject.encode("rejected", forKey: .result)
      try signatureObject.encode(reason, forKey: .reason)
    case .skipped(let reason):
      try signatureObject.encode("skipped", forKey: .result)
      try signatureObject.encode(reason, forKey: .reason)
    }
  }
}
