import OTAStorage
import OTAWire

/// The kept activation and the owner's consent as records of the state directory: `key=value`
/// lines a person can read (and `otad consent` writes), replaced whole (`RecordStore.replace`), so
/// that after a power cut each is wholly old or wholly new. A record that does not parse counts for
/// nothing: the image stays validated and a central (or the owner) asks again; nothing is lost.
public enum ActivationRecords {
  public static let activationName = "activation"
  public static let consentName = "consent"
  /// The policy and lock directory the running daemon started with, for `otad status` (which may
  /// be run without the daemon's flags).
  public static let policyName = "activation-policy"

  public static func encode(_ kept: KeptActivationRecord) -> [UInt8] {
    var lines = [
      "slot=\(kept.slot)", "version=\(kept.version)", "size=\(kept.size)", "crc32=\(kept.crc32)",
      "permanent=\(kept.permanent)", "first-held=\(kept.firstHeld)", "security=\(kept.security)",
    ]
    if let start = kept.notBefore { lines.append("not-before=\(start)") }
    if let end = kept.notAfter { lines.append("not-after=\(end)") }
    return Array((lines.joined(separator: "\n") + "\n").utf8)
  }

  public static func decodeActivation(_ bytes: [UInt8]) -> KeptActivationRecord? {
    let fields = Self.fields(bytes)
    guard let slotText = fields["slot"], let slot = SlotID.allCases.first(where: { "\($0)" == slotText }),
      let version = fields["version"].flatMap(Version.init(text:)),
      let size = fields["size"].flatMap({ UInt32($0) }), let crc32 = fields["crc32"].flatMap({ UInt32($0) }),
      let permanent = fields["permanent"].flatMap({ Bool($0) }),
      let firstHeld = fields["first-held"].flatMap({ Int64($0) }),
      let security = fields["security"].flatMap({ Bool($0) })
    else { return nil }
    let notBefore = fields["not-before"].flatMap { Int64($0) }
    let notAfter = fields["not-after"].flatMap { Int64($0) }
    if fields["not-before"] != nil, notBefore == nil { return nil }
    if fields["not-after"] != nil, notAfter == nil { return nil }
    return KeptActivationRecord(
      slot: slot, version: version, size: size, crc32: crc32, permanent: permanent, notBefore: notBefore,
      notAfter: notAfter, firstHeld: firstHeld, security: security)
  }

  public static func encode(_ answer: ConsentAnswer) -> [UInt8] {
    var lines = ["version=\(answer.version)", "decision=\(answer.decision.rawValue)", "at=\(answer.at)"]
    if let until = answer.until { lines.append("until=\(until)") }
    return Array((lines.joined(separator: "\n") + "\n").utf8)
  }

  public static func decodeConsent(_ bytes: [UInt8]) -> ConsentAnswer? {
    let fields = Self.fields(bytes)
    guard let version = fields["version"].flatMap(Version.init(text:)),
      let decision = fields["decision"].flatMap(ConsentAnswer.Decision.init(rawValue:)),
      let at = fields["at"].flatMap({ Int64($0) })
    else { return nil }
    let until = fields["until"].flatMap { Int64($0) }
    if fields["until"] != nil, until == nil { return nil }
    if decision == .postpone, until == nil { return nil }
    return ConsentAnswer(version: version, decision: decision, until: until, at: at)
  }

  /// The owner's answer as stored; nil when there is none or it does not parse.
  public static func loadConsent(_ records: any RecordStore) -> ConsentAnswer? {
    (try? records.load(consentName)).flatMap { $0 }.flatMap(decodeConsent)
  }

  /// An update lock file's text (docs/OTAD.md, "The device has a say"): `pid=`, `reason=` and
  /// `until=` lines (seconds since 1970 UTC). Nil when it does not parse, or names neither a
  /// process nor a deadline: a lock nothing ends would hold the device forever.
  public static func parseLock(holder: String, _ bytes: [UInt8]) -> UpdateLock? {
    let fields = Self.fields(bytes)
    guard !fields.isEmpty, Set(fields.keys).isSubset(of: ["pid", "reason", "until"]) else { return nil }
    let pid = fields["pid"].flatMap { Int32($0) }
    let until = fields["until"].flatMap { Int64($0) }
    if fields["pid"] != nil, pid.map({ $0 > 0 }) != true { return nil }
    if fields["until"] != nil, until == nil { return nil }
    guard pid != nil || until != nil else { return nil }
    let reason = String(
      (fields["reason"] ?? "no reason given").unicodeScalars.filter { $0.value >= 0x20 }.prefix(200))
    return UpdateLock(holder: holder, reason: reason, pid: pid, until: until)
  }

  public static func encode(_ policy: ActivationPolicy, lockDirectory: String) -> [UInt8] {
    Array(
      "require-consent=\(policy.requireConsent)\nmax-deferral=\(policy.maxDeferral)\nlock-dir=\(lockDirectory)\n"
        .utf8)
  }

  public static func decodePolicy(_ bytes: [UInt8]) -> (policy: ActivationPolicy, lockDirectory: String)? {
    let fields = Self.fields(bytes)
    guard let consent = fields["require-consent"].flatMap({ Bool($0) }),
      let deferral = fields["max-deferral"].flatMap({ Int64($0) }), let directory = fields["lock-dir"]
    else { return nil }
    return (ActivationPolicy(requireConsent: consent, maxDeferral: deferral), directory)
  }

  /// `key=value` lines; anything else (or a second value for a key) makes the record unreadable.
  static func fields(_ bytes: [UInt8]) -> [String: String] {
    guard bytes.count <= 4096, let text = String(validating: bytes, as: UTF8.self) else { return [:] }
    var fields: [String: String] = [:]
    for line in text.split(separator: "\n") where !line.isEmpty {
      guard let equals = line.firstIndex(of: "=") else { return [:] }
      let key = String(line[..<equals])
      guard fields[key] == nil else { return [:] }
      fields[key] = String(line[line.index(after: equals)...])
    }
    return fields
  }
}
