/// OS info's `format`: letters naming uname's fields, answered space-separated in Zephyr's fixed
/// order whatever the order asked; "a" is all of them; no letter (an empty text) is the kernel name;
/// any other letter is the OS group's "invalid format" (Zephyr's `OS_MGMT_ERR_INVALID_FORMAT`).
enum SMPSystemInfoFormat {
  static let order: [Character] = ["s", "n", "r", "v", "b", "m", "p", "i", "o"]

  static func render(_ format: String, _ info: SMPSystemInfo) throws(SMPFailure) -> String {
    var asked = Set<Character>()
    for letter in format {
      if letter == "a" {
        asked.formUnion(order)
      } else if order.contains(letter) {
        asked.insert(letter)
      } else {
        throw .os(.invalidFormat)
      }
    }
    if asked.isEmpty { asked.insert("s") }
    return order.filter(asked.contains).map { field($0, info) }.joined(separator: " ")
  }

  private static func field(_ letter: Character, _ info: SMPSystemInfo) -> String {
    switch letter {
    case "s": info.kernelName
    case "n": info.nodeName
    case "r": info.kernelRelease
    case "v": info.kernelVersion
    case "b": info.buildDateTime
    case "m": info.machine
    case "p": info.processor
    case "i": info.hardwarePlatform
    default: info.operatingSystem
    }
  }
}
