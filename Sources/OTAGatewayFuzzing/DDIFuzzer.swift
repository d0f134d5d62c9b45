import Foundation
import OTAFuzzing
import OTAGateway

/// The `ddi` fuzz target: what the gateway decodes from a hawkBit DDI server. The first byte picks
/// how the rest is read:
/// - JSON for `DDIControllerBase` (a poll's answer), `DDIDeploymentBase` (then
///   `ArtifactReference.choose` for an HTTPS and an HTTP server), or `DDICancelAction`,
///   `DDIConfirmationBaseAction` and `DDIConfirmationFeedback` (the same bytes read as each);
/// - a deployment built from the input (DDIDeploymentJSON): Foundation's JSON parser is not
///   instrumented, so byte mutations alone seldom reach `choose`'s rules; the built one does;
/// - text for `DDIPollingInterval.parse`.
/// Invariants (DDIChecks): nothing traps; what decodes encodes to JSON that decodes equal; a chosen
/// artifact is one of the deployment's, with its size in bounds, a hash of ASCII lowercase hex of its
/// algorithm's length that every spelling of that algorithm agrees on, and a link of the server's
/// scheme; a polling interval is the HH:MM:SS it was read from.
public enum DDIFuzzer {
  public static func check(_ input: [UInt8]) -> [InvariantViolation] {
    guard let selector = input.first else { return [] }
    let rest = Array(input.dropFirst())
    switch selector % 5 {
    case 0: return DDIChecks.controllerBase(rest)
    case 1: return DDIChecks.deployment(rest)
    case 2:
      return DDIChecks.roundTrip(DDICancelAction.self, rest)
        + DDIChecks.roundTrip(DDIConfirmationBaseAction.self, rest)
        + DDIChecks.roundTrip(DDIConfirmationFeedback.self, rest)
    case 3: return DDIChecks.deployment(DDIDeploymentJSON.build(rest))
    default: return DDIChecks.pollingInterval(String(decoding: rest, as: UTF8.self))
    }
  }

  /// The reference an input's deployment gives an HTTP server (nil when none is chosen; an HTTPS
  /// server's pick is the same or none): lets the tests show that the seeds reach a chosen artifact.
  public static func chosenArtifact(_ input: [UInt8]) -> ArtifactReference? {
    guard let selector = input.first, selector % 5 == 1 || selector % 5 == 3 else { return nil }
    let rest = Array(input.dropFirst())
    let json = selector % 5 == 1 ? rest : DDIDeploymentJSON.build(rest)
    guard let base = try? JSONDecoder().decode(DDIDeploymentBase.self, from: Data(json)) else { return nil }
    return try? ArtifactReference.choose(from: base, serverScheme: "http")
  }
}
