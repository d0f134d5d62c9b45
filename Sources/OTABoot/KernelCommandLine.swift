import OTAWire

/// The slot named on the kernel command line, the way the U-Boot and GRUB backends learn which slot
/// the bootloader started: `rauc.slot=A|B` (what RAUC's boot scripts add) or `otad.slot=a|b`, both
/// case-insensitive. When the line names a slot more than once, the last one counts, as with any
/// kernel parameter.
enum KernelCommandLine {
  /// The slot `line` names, or nil when it names none. A token naming something else (`rauc.slot=C`)
  /// is an error rather than nil: the bootloader script is set up for other slot names.
  static func slot(in line: String) throws(BootBackendError) -> SlotID? {
    var found: SlotID?
    for token in line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }) {
      guard let equals = token.firstIndex(of: "=") else { continue }
      let key = token[..<equals].lowercased()
      guard key == "rauc.slot" || key == "otad.slot" else { continue }
      var value = token[token.index(after: equals)...]
      if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
        value = value.dropFirst().dropLast()
      }
      switch value.lowercased() {
      case "a": found = .a
      case "b": found = .b
      default:
        throw BootBackendError("the kernel command line has \(token), which names neither slot A nor B")
      }
    }
    return found
  }

  /// The slot named in the file `path` (normally /proc/cmdline); `hint` says where to add the token
  /// when there is none.
  static func bootedSlot(path: String, hint: String) throws(BootBackendError) -> SlotID {
    guard let bytes = try BootFileSystem.contents(of: path) else {
      throw BootBackendError("cannot read the kernel command line: \(path) does not exist")
    }
    guard let slot = try slot(in: String(decoding: bytes, as: UTF8.self)) else {
      throw BootBackendError(
        "\(path) names no slot: \(hint) add rauc.slot=A or rauc.slot=B (or otad.slot=a|b) to each slot's kernel command line"
      )
    }
    return slot
  }
}
