/// What a hawkBit DDI server answers (Direct Device Integration API, `/{tenant}/controller/v1/...`),
/// decoded leniently: fields the gateway does not use are ignored, and those it uses are checked
/// where they are used, so a server that adds fields keeps working and one that sends garbage is
/// refused with the field named. Codable and Equatable: what decodes encodes to JSON that decodes
/// to an equal value (the `ddi` fuzz target checks it), and test servers can write answers.

/// A link in a DDI answer's `_links`.
public struct DDILink: Codable, Sendable, Equatable {
  public var href: String
  public init(href: String) { self.href = href }
}

/// The answer to a poll of one target (`GET .../controller/v1/{controllerId}`): how long to sleep,
/// and what the server wants of the target now.
public struct DDIControllerBase: Codable, Sendable, Equatable {
  public struct Config: Codable, Sendable, Equatable {
    public struct Polling: Codable, Sendable, Equatable { public var sleep: String? }
    public var polling: Polling?
  }
  public var config: Config?
  public var links: [String: DDILink]

  enum CodingKeys: String, CodingKey {
    case config
    case links = "_links"
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    config = try container.decodeIfPresent(Config.self, forKey: .config)
    links = try container.decodeIfPresent([String: DDILink].self, forKey: .links) ?? [:]
  }

  /// The server's polling interval (`config.polling.sleep`, "HH:MM:SS"), nil when absent or unreadable.
  public var pollingInterval: Duration? { config?.polling?.sleep.flatMap(DDIPollingInterval.parse) }
  /// A deployment is waiting for the target.
  public var deploymentBase: DDILink? { links["deploymentBase"] }
  /// The server asks for the target's attributes.
  public var configData: DDILink? { links["configData"] }
  /// The server cancels an action.
  public var cancelAction: DDILink? { links["cancelAction"] }
}

/// The answer to `GET .../deploymentBase/{actionId}`: what to download and install.
public struct DDIDeploymentBase: Codable, Sendable, Equatable {
  public struct Deployment: Codable, Sendable, Equatable {
    /// "skip", "attempt" or "forced".
    public var download: String?
    /// "skip", "attempt" or "forced": "skip" means download only, install later.
    public var update: String?
    /// "available" or "unavailable" when the action has a maintenance window.
    public var maintenanceWindow: String?
    public var chunks: [Chunk]
  }
  public struct Chunk: Codable, Sendable, Equatable {
    public var part: String?
    public var version: String?
    public var name: String?
    public var artifacts: [Artifact]
  }
  public struct Artifact: Codable, Sendable, Equatable {
    public var filename: String
    public var hashes: [String: String]
    public var size: Int
    public var links: [String: DDILink]

    enum CodingKeys: String, CodingKey {
      case filename, hashes, size
      case links = "_links"
    }
  }
  public var id: String
  public var deployment: Deployment
}

/// The answer to `GET .../cancelAction/{actionId}`: the action the server stops.
public struct DDICancelAction: Codable, Sendable, Equatable {
  public struct Cancel: Codable, Sendable, Equatable { public var stopId: String }
  public var id: String
  public var cancelAction: Cancel
}
