import OTABoot
import OTAJournal
import OTAStorage
import OTATrust
import OTAWire

/// How the device judges a stored image: the policy (trusted keys, downgrades, the decryption key)
/// and the check that applies it. Injected into `ReceiverHost` so the host itself knows no image
/// format: for an encrypted image it only learns a range of the slot and a transform of its bytes.
public struct ImageCheck: Sendable {
  public enum Outcome: Equatable, Sendable {
    /// The image may be activated; its security counter goes into the boot state, and so does its
    /// seal (the SHA-256 of all its bytes) when the check was asked to seal, and the CRC32 of its
    /// bytes as the slot holds them (an encrypted image's differs from the sender's once decrypted).
    case valid(securityCounter: UInt32, seal: [UInt8]?, storedCRC32: UInt32)
    case invalid(StatusCode, reason: String)
  }

  /// Checks the image `TransferJournal` describes; `sealing`: also the SHA-256 of all its bytes;
  /// `plaintextBelow`: an encrypted image's payload is decrypted in place below this slot offset.
  public typealias Verify =
    @Sendable (
      any SlotReader, TransferJournal, InstalledImage, _ sealing: Bool, _ plaintextBelow: UInt64
    ) throws(StorageError) -> Outcome

  /// The transform that turns an encrypted image's payload into what will run, nil for any other
  /// image (asked only of an image the check passed).
  public typealias Decryption =
    @Sendable (any SlotReader, TransferJournal) throws(StorageError) -> PayloadCipher?

  public let policy: ImagePolicy
  public let verify: Verify
  public let decryption: Decryption

  public init(policy: ImagePolicy, verify: @escaping Verify, decryption: @escaping Decryption) {
    self.policy = policy
    self.verify = verify
    self.decryption = decryption
  }

  /// The check a device uses: length, CRC32 (of the bytes as sent), and for an MCUboot image its
  /// header, TLV areas, SHA-256 (of the plaintext, for an encrypted one), signature (when keys are
  /// trusted), version, downgrade and security counter, streamed once from the slot.
  public static func standard(_ policy: ImagePolicy) -> ImageCheck {
    ImageCheck(
      policy: policy,
      verify: { reader, journal, installed, sealing, plaintextBelow throws(StorageError) in
        let verdict = try ImageVerifier.verify(
          reader: reader, size: UInt64(journal.size), expectedCRC: journal.crc32,
          preparedVersion: journal.version, policy: policy, installed: installed, sealing: sealing,
          payload: .asSent(key: policy.decryptionKey, plaintextBelow: plaintextBelow))
        switch verdict {
        case .valid(let report):
          return .valid(
            securityCounter: report.securityCounter, seal: report.seal, storedCRC32: report.storedCRC32)
        case .invalid(let problem): return .invalid(problem.status, reason: problem.description)
        }
      },
      decryption: { reader, journal throws(StorageError) in
        let source = SlotImageSource(reader)
        let cipher = try ImageVerifier.payloadCipher(
          reader: source, size: UInt64(journal.size), key: policy.decryptionKey)
        return try? cipher?.get()
      })
  }
}
