/// How an image names the key its signature was made with, as imgtool's `--public-key-format`.
public enum PublicKeyFormat: String, Sendable, CaseIterable, CustomStringConvertible {
  /// A KEYHASH TLV: the SHA-256 of the key's DER SubjectPublicKeyInfo (imgtool's default).
  case hash
  /// A PUBKEY TLV: the DER SubjectPublicKeyInfo itself.
  case full

  public var description: String { rawValue }
}
