import OTASystem

/// The adapter's LE links as the controller's events describe them, keyed by connection handle.
/// Pure: `fold` takes one event and says what changed. The last facts of each peer are kept after
/// its link is gone, so that a push can say what link it ran on after the device restarted.
public struct LinkFactsBook: Sendable {
  /// What one event changed.
  public enum Change: Equatable, Sendable {
    case opened(LinkFacts)
    case updated(LinkFacts)
    case closed(LinkFacts, reason: UInt8)
  }

  /// The peers whose last facts are kept (the oldest is forgotten first).
  public static let peersKept = 16

  public private(set) var links: [UInt16: LinkFacts] = [:]
  private var lastByPeer: [BluetoothAddress: LinkFacts] = [:]
  private var peerOrder: [BluetoothAddress] = []

  public init() {}

  /// Folds one event in. An update of a handle never seen connected (the link was made before the
  /// socket opened) is ignored: without its Connection Complete there is no peer to file it under.
  public mutating func fold(_ event: HCILinkEvent) -> Change? {
    switch event {
    case .connected(let handle, let role, let peer, let timing):
      let facts = LinkFacts(handle: handle, role: role, peer: peer, timing: timing)
      links[handle] = facts
      remember(facts)
      return .opened(facts)
    case .connectionUpdated(let handle, let timing):
      return update(handle) { $0.timing = timing }
    case .dataLengthChanged(let handle, let length):
      return update(handle) { $0.dataLength = length }
    case .phyUpdated(let handle, let tx, let rx):
      return update(handle) { $0.phy = LinkPHYs(tx: tx, rx: rx) }
    case .disconnected(let handle, let reason):
      guard let facts = links.removeValue(forKey: handle) else { return nil }
      return .closed(facts, reason: reason)
    }
  }

  /// The open link to `peer`, else the last one it had.
  public func facts(for peer: BluetoothAddress) -> LinkFacts? {
    links.values.first { $0.peer == peer } ?? lastByPeer[peer]
  }

  private mutating func update(_ handle: UInt16, _ change: (inout LinkFacts) -> Void) -> Change? {
    guard var facts = links[handle] else { return nil }
    change(&facts)
    links[handle] = facts
    remember(facts)
    return .updated(facts)
  }

  private mutating func remember(_ facts: LinkFacts) {
    if lastByPeer.updateValue(facts, forKey: facts.peer) == nil {
      peerOrder.append(facts.peer)
      if peerOrder.count > Self.peersKept { lastByPeer[peerOrder.removeFirst()] = nil }
    }
  }
}
