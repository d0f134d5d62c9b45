import Foundation
import OTAChecksum
import OTAGateway
import OTATestSupport
import OTAWire
import Testing

/// hawkBit's model as the gateway reads and answers it: maintenance windows, download-only actions
/// and confirmation, from answers shaped after hawkBit's own schema examples (Fixtures/hawkbit).
struct HawkbitModelTests {
  static func fixture<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
    let bytes = try RepositoryRoot.bytes("Tests/OTAGatewayTests/Fixtures/hawkbit/\(name)")
    return try JSONDecoder().decode(T.self, from: Data(bytes))
  }

  static func object(_ value: some Encodable) throws -> [String: Any] {
    let data = try JSONEncoder().encode(value)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  // MARK: The mode of an action

  @Test func aWindowThatIsAvailableInstalls() throws {
    let deployment = try Self.fixture("deployment-window-available.json", as: DDIDeploymentBase.self)
    #expect(deployment.deployment.maintenanceWindow == "available")
    #expect(ActionMode(deployment.deployment) == .install)
  }

  @Test func aWindowThatIsUnavailableStages() throws {
    let deployment = try Self.fixture("deployment-window-unavailable.json", as: DDIDeploymentBase.self)
    #expect(deployment.deployment.update == "skip")
    #expect(ActionMode(deployment.deployment) == .stageForWindow)
    #expect(!ActionMode.stageForWindow.activates)
  }

  @Test func updateSkipWithoutAWindowIsDownloadOnly() throws {
    let deployment = try Self.fixture("deployment-download-only.json", as: DDIDeploymentBase.self)
    #expect(deployment.deployment.maintenanceWindow == nil)
    #expect(ActionMode(deployment.deployment) == .downloadOnly)
    #expect(!ActionMode.downloadOnly.activates)
  }

  @Test func theModesReadHawkBitsWordsInAnyCase() throws {
    var deployment = try Self.fixture("deployment-window-available.json", as: DDIDeploymentBase.self)
      .deployment
    deployment.maintenanceWindow = "UNAVAILABLE"
    #expect(ActionMode(deployment) == .stageForWindow)
    deployment.maintenanceWindow = nil
    deployment.download = "skip"
    #expect(ActionMode(deployment) == .notYet)
    deployment.download = "attempt"
    deployment.update = "attempt"
    #expect(ActionMode(deployment) == .install)
    #expect(ActionMode(deployment, confirming: true) == .confirm)
    #expect(ActionMode.confirm.activates)
  }

  // MARK: Confirmation

  @Test func aPollOffersTheActionWaitingForConfirmation() throws {
    let base = try Self.fixture("poll-confirmation.json", as: DDIControllerBase.self)
    let link = try #require(base.confirmationBase)
    #expect(link.href.hasSuffix("/confirmationBase/10?c=-2122565939"))
    #expect(base.deploymentBase == nil)
  }

  @Test func theConfirmationBaseIsADeploymentToStage() throws {
    let action = try Self.fixture("confirmation-base.json", as: DDIConfirmationBaseAction.self)
    #expect(action.id == "6")
    #expect(action.actionHistory?.status == "WAIT_FOR_CONFIRMATION")
    #expect(action.actionHistory?.messages?.count == 2)
    let deployment = action.deployment
    #expect(deployment.id == "6")
    #expect(deployment.deployment.maintenanceWindow == "available")
    let artifact = try ArtifactReference.choose(from: deployment, serverScheme: "https")
    #expect(artifact.algorithm == .sha256)
    #expect(artifact.hash == "618faa741070b3f8148bad06f088e537a8f7913e734df4dde61fb163725cb4ee")
    let json = try JSONEncoder().encode(action)
    #expect(try JSONDecoder().decode(DDIConfirmationBaseAction.self, from: json) == action)
  }

  @Test func confirmationFeedbackIsInHawkBitsTerms() throws {
    let confirmed = try Self.object(DDIConfirmationFeedback(.confirmed, code: 0, details: ["agreed"]))
    #expect(confirmed["confirmation"] as? String == "confirmed")
    #expect(confirmed["code"] as? Int == 0)
    #expect(confirmed["details"] as? [String] == ["agreed"])
    let denied = try Self.object(DDIConfirmationFeedback(.denied, details: ["no"]))
    #expect(denied["confirmation"] as? String == "denied")
    #expect(denied["code"] == nil, "code is optional in DDI: absent, not null")
  }

  @Test func theDevicesAnswerIsTheConfirmation() {
    let version = Version(major: 2, minor: 0, revision: 0)
    guard case .answer(let yes) = ConfirmationDecision.step(for: .activated(version)) else {
      Issue.record("activated is an answer")
      return
    }
    #expect(yes.confirmation == .confirmed && yes.code == 0)
    guard case .answer(let own) = ConfirmationDecision.step(for: .activatedOnItsOwn(version)) else {
      Issue.record("activated on its own is an answer")
      return
    }
    #expect(own.confirmation == .confirmed && own.details[0].contains("on its own"))
    guard case .answer(let no) = ConfirmationDecision.step(for: .declined) else {
      Issue.record("declined is an answer")
      return
    }
    #expect(no.confirmation == .denied && no.code == 0x0F && no.details[0].contains("declined"))
    guard
      case .answer(let refused) = ConfirmationDecision.step(for: .refused(.signatureInvalid, "bad signature"))
    else {
      Issue.record("a refused image is an answer")
      return
    }
    #expect(
      refused.confirmation == .denied && refused.details == ["the device refused the image: bad signature"])
    guard
      case .answer(let failed) = ConfirmationDecision.step(
        for: .activatedButFailed(version, "it rolled back"))
    else {
      Issue.record("an activation that failed is the device's consent")
      return
    }
    #expect(failed.confirmation == .confirmed && failed.details[0].hasSuffix("but it rolled back"))
  }

  @Test func aDeferralSendsNothingAndAsksAgainWhenTheDeviceSays() {
    let step = ConfirmationDecision.step(
      for: .deferred(ActivationDeferral(reason: .awaitingConsent, askAgainAfter: 60)))
    guard case .askAgain(let seconds, let reason) = step else {
      Issue.record("a deferral is no answer")
      return
    }
    #expect(seconds == 60)
    #expect(reason.contains("awaiting consent") && reason.contains("ask again in 60 s"))
    let postponed = ConfirmationDecision.step(
      for: .deferred(ActivationDeferral(reason: .postponed, askAgainAfter: 0)))
    #expect(postponed == .askAgain(afterSeconds: 0, reason: "the device deferred the activation (postponed)"))
  }

  @Test func aDeviceThatAsksNoConsentIsConfirmedOnItsBehalf() {
    let feedback = ConfirmationDecision.onBehalf(of: "sim-001")
    #expect(feedback.confirmation == .confirmed)
    #expect(
      feedback.details[0].contains("on the device's behalf") && feedback.details[0].contains("flag bit 5"))
  }

  // MARK: Staged images

  @Test func downloadedFeedbackIsWhatHawkBitClosesADownloadOnlyActionWith() throws {
    let feedback = DDIFeedback.downloaded(Version(major: 2, minor: 0, revision: 0), "131072 bytes on air")
    let status = try #require(try Self.object(feedback)["status"] as? [String: Any])
    #expect(status["execution"] as? String == "downloaded")
    #expect((status["result"] as? [String: Any])?["finished"] as? String == "none")
    #expect((status["details"] as? [String])?.first?.contains("validated, not activated") == true)
  }

  @Test func stagedForTheWindowIsProgressThatLeavesTheActionOpen() throws {
    let feedback = DDIFeedback.stagedForWindow(Version(major: 2, minor: 0, revision: 0))
    let status = try #require(try Self.object(feedback)["status"] as? [String: Any])
    #expect(status["execution"] as? String == "proceeding")
    #expect((status["result"] as? [String: Any])?["finished"] as? String == "none")
    #expect(
      (status["details"] as? [String])?.first?.hasPrefix(
        "staged on the device; waiting for the maintenance window") == true)
  }

  static func facts(
    state: DeviceState, size: Int, crc: UInt32, version: Version, flags: InfoRecord.Flags = []
  )
    -> TargetFacts
  {
    let info = InfoRecord(
      state: state, runningSlot: .a, flags: flags,
      slotVersions: SlotPair(a: Version(major: 1, minor: 0, revision: 0), b: version),
      inactiveSlotContent: .unknown, slotCapacity: 1 << 20, windowCapacity: 4096, maxChunkPayload: 240,
      transfer: TransferStatus(state: state, size: UInt32(size), crc32: crc, committedOffset: UInt32(size)),
      transferVersion: version,
      lastOutcome: UpdateOutcome(result: .none, from: .zero, to: .zero, reason: .none, attemptsUsed: 0))
    return TargetFacts(serial: "s", model: "m", hardwareRevision: "1", info: info)
  }

  @Test func onlyAValidatedTransferOfTheImageAndVersionProvesItStaged() {
    let image = SeededGenerator.bytes(4000, seed: 9)
    var crc = CRC32()
    crc.update(image)
    let version = Version(major: 2, minor: 0, revision: 0)
    #expect(
      Self.facts(state: .validated, size: 4000, crc: crc.value, version: version).holdsStaged(
        image, version: version))
    #expect(
      !Self.facts(state: .receiving, size: 4000, crc: crc.value, version: version).holdsStaged(
        image, version: version),
      "still receiving")
    #expect(
      !Self.facts(state: .validated, size: 4000, crc: crc.value ^ 1, version: version).holdsStaged(
        image, version: version), "another image")
    #expect(
      !Self.facts(
        state: .validated, size: 4000, crc: crc.value, version: Version(major: 2, minor: 0, revision: 1)
      )
      .holdsStaged(image, version: version), "another version")
    #expect(!Self.facts(state: .validated, size: 4000, crc: crc.value, version: version).requiresConsent)
    #expect(
      Self.facts(state: .validated, size: 4000, crc: crc.value, version: version, flags: .consentRequired)
        .requiresConsent)
  }
}
