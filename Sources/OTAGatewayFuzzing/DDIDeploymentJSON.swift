import OTAFuzzing

/// A deployment answer built from fuzz bytes: up to 2 chunks of up to 3 artifacts, each with a
/// filename, a size, hashes and links picked from what servers send and what they should not
/// (other spellings of an algorithm, upper case, fullwidth digits, sizes at the bounds, other
/// schemes), or taken from the input as text.
enum DDIDeploymentJSON {
  static func build(_ bytes: [UInt8]) -> [UInt8] {
    var input = FuzzInput(bytes)
    let chunks = (0..<input.int(in: 0...2)).map { _ in chunk(&input) }
    let update = string(&input, ["forced", "attempt", "skip"])
    return Array(
      #"{"id":"1","deployment":{"download":"forced","update":\#(update),"chunks":[\#(chunks.joined(separator: ","))]}}"#
        .utf8)
  }

  static func chunk(_ input: inout FuzzInput) -> String {
    let artifacts = (0..<input.int(in: 0...3)).map { _ in artifact(&input) }
    return
      #"{"part":"os","version":"2.0.0+0","name":"app","artifacts":[\#(artifacts.joined(separator: ","))]}"#
  }

  static func artifact(_ input: inout FuzzInput) -> String {
    let filename = string(&input, ["fw.swu", "FW.SWU", "notes.txt", "a.swu", ".swu", ""])
    let sizes = [
      "5120", "1", "0", "-1", "4294967296", "4294967297", "9223372036854775807", "5120.0", "\(input.u32())",
    ]
    let size = input.pick(sizes)
    let hashes = (0..<input.int(in: 0...3)).map { _ in
      "\(string(&input, ["sha1", "sha256", "SHA256", "Sha1", "md5"])):\(string(&input, hashValues))"
    }
    let links = (0..<input.int(in: 0...2)).map { _ in
      let href = string(
        &input, ["https://s.example/a.swu", "HTTPS://s.example/a", "http://s.example/a", "ftp://s/a", ""])
      return "\(string(&input, ["download", "download-http", "md5sum"])):{\"href\":\(href)}"
    }
    return
      #"{"filename":\#(filename),"size":\#(size),"hashes":{\#(hashes.joined(separator: ","))},"_links":{\#(links.joined(separator: ","))}}"#
  }

  static let hashValues = [
    String(repeating: "a", count: 40), String(repeating: "b", count: 64), String(repeating: "C", count: 40),
    String(repeating: "0", count: 64), String(repeating: "ａ", count: 40), String(repeating: "a", count: 39),
    "",
  ]

  /// One of `choices`, or (one time in four) up to 16 bytes of the input as text: a JSON string.
  static func string(_ input: inout FuzzInput, _ choices: [String]) -> String {
    let byte = input.byte()
    let text =
      byte % 4 == 3
      ? String(decoding: input.bytes(Int(byte >> 2) % 17), as: UTF8.self)
      : choices[Int(byte >> 2) % choices.count]
    return quoted(text)
  }

  static func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}
