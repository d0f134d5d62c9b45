import OTAWire

extension MCUbootImageInspection {
  /// The report `otactl image inspect` prints: one fact a line, hex where imgtool prints hex.
  public var text: String {
    var lines = [
      "MCUboot image, \(fileLength) bytes",
      "header:    hdr_size \(hexAndDecimal(header.headerSize)), img_size \(hexAndDecimal(header.imageSize)), "
        + "protect_tlv_size \(hexAndDecimal(header.protectedTLVSize))",
      "           load_addr 0x\(String(header.loadAddress, radix: 16)), flags 0x\(String(header.flags.rawValue, radix: 16))"
        + " (\(header.flags.names.isEmpty ? "none" : header.flags.names.joined(separator: ", ")))",
      "version:   \(header.version)",
      "security counter: \(securityCounter.map { "\($0) (0x\(String($0, radix: 16)))" } ?? "none")",
      "payload:   offset 0x\(String(layout.payloadRange.lowerBound, radix: 16)), \(header.imageSize) bytes",
    ]
    switch decryption {
    case .success(let algorithm)?:
      lines.append(
        "encrypted: yes, opened with the given \(algorithm) key: hash and signature checked over the plaintext"
      )
    case .failure(let problem)?: lines.append("encrypted: yes, not opened: \(problem)")
    case nil: break
    }
    if trailingByteCount > 0 {
      lines.append("trailing:  \(trailingByteCount) bytes after the TLV areas (ignored by MCUboot)")
    }
    lines.append("TLVs:")
    for entry in entries {
      let area = "\(entry.area)".padded(to: 12)
      let offset = "0x" + String(entry.offset, radix: 16).padded(to: 8)
      let length = "\(entry.value.count)".leftPadded(to: 4)
      lines.append(
        "  \(area)\(offset)\(entry.type.description.padded(to: 20))\(length) B  \(shortHex(entry.value))")
    }
    lines.append("hash:      \(hashSummary)")
    lines.append("signature: \(signatureSummary)")
    return lines.joined(separator: "\n")
  }

  public var hashSummary: String {
    switch hash {
    case .matches(let digest): "ok, SHA-256 \(Hex.string(digest)) matches the SHA256 TLV"
    case .mismatch(let recorded, let computed):
      "MISMATCH: the SHA256 TLV holds \(Hex.string(recorded)) but the image hashes to \(Hex.string(computed))"
    case .uncheckable(let reason): "not checked: \(reason)"
    }
  }

  public var signatureSummary: String {
    switch signature {
    case .notRequested: "not checked (no --key given)"
    case .verified(let key): "verified with the \(key)"
    case .rejected(let reason): "INVALID: \(reason)"
    case .skipped(let reason): "not checked: \(reason)"
    }
  }

  private func hexAndDecimal(_ value: some BinaryInteger) -> String {
    "0x\(String(value, radix: 16)) (\(value))"
  }

  /// Up to 32 bytes in hex; longer values end in `…`.
  private func shortHex(_ bytes: [UInt8]) -> String {
    bytes.count <= 32 ? Hex.string(bytes) : Hex.string(bytes.prefix(32)) + "…"
  }
}

extension String {
  /// Spaces after, to `width` characters and at least one.
  fileprivate func padded(to width: Int) -> String {
    self + String(repeating: " ", count: max(1, width - count))
  }

  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: " ", count: max(0, width - count)) + self
  }
}
