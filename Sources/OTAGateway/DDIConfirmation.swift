/// hawkBit's user consent flow (since 0.3.0M8): an action that waits for the target's confirmation
/// shows in the poll as a `confirmationBase` link instead of a `deploymentBase`; the target reads
/// the action there and answers `confirmed` or `denied` on its feedback resource. Once confirmed,
/// the next poll offers the action as a deployment.

extension DDIControllerBase {
  /// An action waits for the target's confirmation (hawkBit's user consent flow).
  public var confirmationBase: DDILink? { links["confirmationBase"] }
}

/// `GET .../confirmationBase/{actionId}`: the action waiting for confirmation, in the same form as a
/// deployment (what would be downloaded and installed), and what the server recorded of it so far.
public struct DDIConfirmationBaseAction: Codable, Sendable, Equatable {
  public var id: String
  public var confirmation: DDIDeploymentBase.Deployment
  public var actionHistory: DDIActionHistory?

  public init(id: String, confirmation: DDIDeploymentBase.Deployment, actionHistory: DDIActionHistory? = nil)
  {
    self.id = id
    self.confirmation = confirmation
    self.actionHistory = actionHistory
  }

  /// The action as a deployment: what the gateway downloads and stages while it asks the device.
  public var deployment: DDIDeploymentBase { DDIDeploymentBase(id: id, deployment: confirmation) }
}

/// An action's status and the messages the server kept (`actionHistory`, optional in DDI answers).
public struct DDIActionHistory: Codable, Sendable, Equatable {
  public var status: String?
  public var messages: [String]?
}

/// `POST .../confirmationBase/{actionId}/feedback`: the target's answer.
public struct DDIConfirmationFeedback: Codable, Sendable, Equatable {
  public enum Confirmation: String, Codable, Sendable {
    case confirmed, denied
  }
  public var confirmation: Confirmation
  /// An individual status code (optional in DDI): the gateway sends the device's OTA status byte.
  public var code: Int?
  public var details: [String]

  public init(_ confirmation: Confirmation, code: Int? = nil, details: [String]) {
    self.confirmation = confirmation
    self.code = code
    self.details = details
  }
}
