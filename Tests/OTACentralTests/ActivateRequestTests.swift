import OTACentral
import OTASender
import OTAWire
import Testing

/// `otactl activate`: the request Info leads to, and what the answer means, with push's exit codes.
@Suite struct ActivateRequestTests {
  static func info(state: DeviceState, features: Features = [.scheduledActivation]) -> InfoRecord {
    InfoRecord(
      state: state, runningSlot: .a, flags: [],
      slotVersions: SlotPair(
        a: Version(major: 1, minor: 0, revision: 0), b: Version(major: 2, minor: 0, revision: 0)),
      inactiveSlotContent: .unknown, slotCapacity: 4096, windowCapacity: 256, maxChunkPayload: 240,
      transfer: .idle, transferVersion: Version(major: 2, minor: 0, revision: 0), lastOutcome: .none,
      features: features)
  }

  static let window = ActivationWindow(notBefore: 100, notAfter: 200, permanent: false)

  @Test func activateOrScheduleOnlyAValidatedImage() {
    #expect(
      ActivateRequest.request(for: Self.info(state: .validated), window: nil, permanent: true)
        == .success(.activate(permanent: true)))
    // [P-REQ-15]
    #expect(
      ActivateRequest.request(for: Self.info(state: .validated), window: Self.window, permanent: true)
        == .success(.schedule(ActivationWindow(notBefore: 100, notAfter: 200, permanent: true))))
    #expect(
      ActivateRequest.request(for: Self.info(state: .idle), window: nil, permanent: false)
        == .failure(.nothingValidated(.idle)))
    #expect(
      ActivateRequest.request(
        for: Self.info(state: .validated, features: []), window: Self.window, permanent: false)
        == .failure(.schedulingUnsupported))
  }

  @Test func theAnswersMeanWhatTheyMeanToAPush() {
    let info = Self.info(state: .validated)
    let activate = Request.activate(permanent: false)
    #expect(
      ActivateRequest.ending(of: activate, answer: Response(.activate, .success), info: info)
        == .activated(Version(major: 2, minor: 0, revision: 0)))
    // [P-HOLD-1] [P-RESP-10]
    let deferral = ActivationDeferral(reason: .awaitingConsent, askAgainAfter: 0)
    let deferred = ActivateRequest.ending(
      of: activate, answer: Response(.activate, .deferred, .deferral(deferral)), info: info)
    #expect(deferred == .kept(.deferred(deferral)))
    #expect(deferred.exitStatus == .activationKept)
    // [P-HOLD-2]
    let declined = ActivateRequest.ending(of: activate, answer: Response(.activate, .declined), info: info)
    #expect(declined == .failed(.declined) && declined.exitStatus == .declined)
    let scheduled = ActivateRequest.ending(
      of: .schedule(Self.window), answer: Response(.schedule, .success), info: info)
    #expect(scheduled == .kept(.scheduled(Self.window)) && scheduled.exitStatus == .success)
    #expect(
      ActivateRequest.ending(of: activate, answer: Response(.activate, .signatureInvalid), info: info)
        == .failed(.validationFailed(.signatureInvalid)))
  }

  @Test func theKeptActivationIsExplained() {
    #expect(
      ActivationKept.deferred(ActivationDeferral(reason: .locked, askAgainAfter: 60)).explanation.hasPrefix(
        "deferred: an update lock, ask again in 60 s; the device keeps the activation and carries it out itself "
          + "once nothing holds it."))
    #expect(
      ActivationKept.scheduled(
        ActivationWindow(notBefore: 1_796_004_000, notAfter: 1_796_011_200, permanent: false)
      )
      .explanation.hasPrefix(
        "scheduled: the device activates it between 2026-11-30T02:00:00Z and 2026-11-30T04:00:00Z"))
    #expect(
      PushFailure.declined.explanation.hasPrefix(
        "the device's owner declined this update; the device dropped it"))
  }
}
