import OTABoot
import OTAEngine
import OTAStorage
import OTATrust
import OTAWire

/// How the device judges a stored image: the policy (trusted keys, downgrades) and the check that
/// applies it. Injected into `ReceiverHost` so the host itself knows no image format.
public struct ImageCheck: Sendable {
  public enum Outcome: Equatable, Sendable {
    /// The image may be activated; its security counter goes into the boot state.
    case valid(securityCounter: UInt32)
    case invalid(StatusCode, reason: String)
  }

  public typealias Verify =
    @Sendable (any SlotReader, TransferJournal, InstalledImage) throws(StorageError) -> Outcome

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
    ImageCheck(policy: policy) { reader, journal, installed throws(StorageError) in
      let verdict = try ImageVerifier.verify(
        reader: reader, size: UInt64(journal.size), expectedCRC: journal.crc32,
        preparedVersion: journal.version, policy: policy, installed: installed)
      switch verdict {
      case .valid(let report): return .valid(securityCounter: report.securityCounter)
      case .invalid(let problem): return .invalid(problem.status, reason: problem.description)
      }
    }
  }
}
