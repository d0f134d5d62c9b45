import OTABoot
import OTAEngine
import OTAStorage
import OTATrust
import OTAWire

/// How the device judges a stored image: the policy (trusted keys, downgrades) and the check that
/// applies it. Injected into `ReceiverHost` so the host itself knows no image format.
public struct ImageCheck: Sendable {
  public enum Outcome: Equatable, Sendable {
    /// The image may be activated; its security counter goes into the boot state, and so does its
    /// seal (the SHA-256 of all its bytes) when the check was asked to seal.
    case valid(securityCounter: UInt32, seal: [UInt8]?)
    case invalid(StatusCode, reason: String)
  }

  /// Checks the image `TransferJournal` describes; `sealing`: also the SHA-256 of all its bytes.
  public typealias Verify =
    @Sendable (any SlotReader, TransferJournal, InstalledImage, _ sealing: Bool) throws(StorageError) ->
    Outcome

  public let policy: ImagePolicy
  public let verify: Verify

  public init(policy: ImagePolicy, verify: @escaping Verify) {
    self.policy = policy
    self.verify = verify
  }

  /// The check a device uses: length, CRC32, and for an MCUboot image its header, TLV areas,
  /// SHA-256, signature (when keys are trusted), version, downgrade and security counter, streamed
  /// once from the slot.
  public static func standard(_ policy: ImagePolicy) -> ImageCheck {
    ImageCheck(policy: policy) { reader, journal, installed, sealing throws(StorageError) in
      let verdict = try ImageVerifier.verify(
        reader: reader, size: UInt64(journal.size), expectedCRC: journal.crc32,
        preparedVersion: journal.version, policy: policy, installed: installed, sealing: sealing)
      switch verdict {
      case .valid(let report): return .valid(securityCounter: report.securityCounter, seal: report.seal)
      case .invalid(let problem): return .invalid(problem.status, reason: problem.description)
      }
    }
  }
}
