import OTASender
import OTAWire

/// What `otactl` says when a push fails, and the exit code it uses. Documented in docs/OTACTL.md.
extension PushFailure {
  public var exitStatus: OtactlExitCode {
    switch self {
    case .validationFailed(.signatureInvalid), .refused(_, .signatureInvalid): .signatureInvalid
    case .validationFailed(.downgradeRefused), .refused(_, .downgradeRefused): .downgradeRefused
    case .validationFailed(.cannotDecrypt), .refused(_, .cannotDecrypt): .cannotDecrypt
    case .windowRetriesExhausted(_, .storageError, _), .refused(_, .storageError): .storageFailed
    case .unreachable: .unreachable
    case .tooLarge: .tooLarge
    case .windowRetriesExhausted: .transferFailed
    case .validationFailed: .validationFailed
    case .rolledBack, .wrongVersionAfterRestart, .notConfirmed: .rolledBack
    case .timedOut: .timedOut
    // The device refused the connection, as it refuses PREPARE with busy (`.refused`).
    case .refused, .protocolError, .deviceBusy, .schedulingUnsupported: .refused
    case .declined: .declined
    }
  }

  public var exitCode: Int32 { exitStatus.rawValue }

  /// What happened, then what to do about it.
  public var explanation: String {
    switch self {
    case .unreachable(let attempts, let reason):
      "device not reachable: \(attempts) connection attempts failed (last: \(reason)). "
        + "Check that the device is running and in range, and that --device names it."
    case .deviceBusy(let attempts, let waited):
      "device busy with another central: \(attempts) connection attempts failed, refused as busy for the "
        + "last \(Self.seconds(waited)). It serves one central at a time: try again when the other one is "
        + "done (a push resumes where it stopped)."
    case .tooLarge(let size, let capacity):
      "image too large: \(size) bytes, but the device's slot holds \(capacity). "
        + "Build a smaller image or give the device larger slots. Nothing was sent."
    case .windowRetriesExhausted(let offset, .storageError, let attempts):
      "storage error at byte \(offset) after \(attempts) attempts: the data arrived, but the device's "
        + "storage is full or failing and could not keep it (the link is not to blame). See the device's log "
        + "(otad names the file and the error), free space or fix its storage, then push again: "
        + "the device keeps what it committed and the next push resumes."
    case .refused(let opcode, .storageError):
      "the device could not carry out \(opcode): its storage is full or failing (storage error, answered "
        + "every time it was asked). See the device's log (otad names the file and the error), free space "
        + "or fix its storage, then push again; the running firmware is untouched."
    case .windowRetriesExhausted(let offset, let status, let attempts):
      "\(status) at byte \(offset) after \(attempts) attempts: the link keeps losing or corrupting data there. "
        + "Move closer or try again; the device keeps what it committed and the next push resumes."
    case .validationFailed(.crcMismatch):
      "validation failed: the image stored on the device does not match the CRC32 announced. "
        + "Push it again; if this repeats, the device's storage may be failing."
    case .validationFailed(.signatureInvalid), .refused(_, .signatureInvalid):
      "signature invalid: the device accepts only images signed by one of its trusted keys, and this "
        + "one is not (unsigned, raw, another key, or altered after signing). Sign it with the release key "
        + "(otactl image sign --key), check with otactl image inspect --key; the running firmware is untouched."
    case .validationFailed(.downgradeRefused), .refused(_, .downgradeRefused):
      "downgrade refused: the image is older than the firmware the device has confirmed (its version, or "
        + "its security counter). Push a newer image; a device may allow older versions ([trust] "
        + "allow-downgrade) but never a lower security counter. The running firmware is untouched."
    case .validationFailed(.cannotDecrypt), .refused(_, .cannotDecrypt):
      "cannot decrypt: the image is encrypted and the device cannot open it. Either it holds no decryption key "
        + "(otactl info says whether it does; give it one with [trust] decryption-key), or the image was "
        + "encrypted for another key (encrypt it for this device's public key: otactl image create --encrypt, "
        + "imgtool sign --encrypt). The running firmware is untouched."
    case .validationFailed(let status):
      "validation failed (\(status)): the device does not accept this image (header, hash, version or "
        + "signature). Check the image file; the running firmware is untouched."
    case .rolledBack(let running, let reason):
      "the device rolled back to \(running) (\(reason)): the new image did not prove itself. "
        + "See the device's logs (otad status shows the outcome); it still runs the previous firmware."
    case .notConfirmed(let version, let waited):
      "firmware \(version) runs on trial, but nobody confirmed it within \(waited): the device's health "
        + "check did not decide. Confirm it (otactl confirm); unconfirmed, it rolls back once its confirm "
        + "timeout and trial boots run out."
    case .wrongVersionAfterRestart(let expected, let running):
      "after the restart the device runs \(running), not \(expected). "
        + "Its boot stage did not take the new slot; see the device's logs."
    case .timedOut(let phase):
      "the device stopped answering (\(phase.rawValue)). Try again: the push resumes where it stopped."
    case .refused(.prepare, .invalidState):
      "the device refused PREPARE: it runs an image on trial. Confirm it first (otactl confirm), then push."
    case .refused(.schedule, .invalidParameter):
      "the device refused the window: by its own clock it has ended, or ends before it starts. Check the "
        + "device's time (a device without a battery-backed clock needs it from the network), then ask "
        + "again; the image stays validated on the device (otactl activate)."
    case .refused(let opcode, let status):
      "the device refused \(opcode): \(status)."
    case .protocolError(let what):
      "the device broke the protocol: \(what)."
    case .declined:
      "the device's owner declined this update; the device dropped it (the running firmware is untouched). "
        + "The answer is about this version and the device keeps it: pushed again, it is declined again "
        + "until the owner changes it on the device (otad consent accept)."
    case .schedulingUnsupported:
      "the device takes no scheduled activation (Info features bit 5: its otad is from before SCHEDULE). "
        + "Update otad on the device, or push with --no-activate and run `otactl activate` in the window "
        + "yourself. Nothing was sent."
    }
  }
}

extension PushFailure {
  /// "3.2 s": a duration to a tenth of a second.
  static func seconds(_ duration: Duration) -> String {
    let tenths = max(0, Int((duration / .milliseconds(100)).rounded()))
    return "\(tenths / 10).\(tenths % 10) s"
  }

  /// The explanation, with what the device's Info adds: a device that requires pairing has
  /// bluetoothd refuse every write from a central that has not paired with it, which looks from
  /// here like a link that keeps failing.
  public func explanation(device info: InfoRecord?) -> String {
    if let info, info.flags.contains(.bootStateRebuilt), self == .refused(.prepare, .invalidState) {
      return "the device refused PREPARE: it lost its boot state and could not tell which slot holds its "
        + "last good image, so it writes neither until the running firmware proves itself (its health "
        + "check failed or has not passed yet) or is confirmed. If it is the firmware you want (otad "
        + "status shows what it found), confirm it: `otactl confirm` over a paired link, or `otad "
        + "mark-good` on the device; then push again."
    }
    guard let info, info.flags.contains(.pairingRequired) else { return explanation }
    switch self {
    case .windowRetriesExhausted(_, .storageError, _):
      return explanation
    case .unreachable, .timedOut, .protocolError, .windowRetriesExhausted:
      return explanation
        + " Note: this device accepts writes only from a central paired with it (Info: pairing required); "
        + "pair this adapter with it first (docs/RASPBERRY-PI.md, Pairing)."
    default:
      return explanation
    }
  }
}
