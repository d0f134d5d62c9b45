import OTABlueZ
import OTACentral
import OTASocketLink

/// What otactl reports of a session's link once the push has ended.
extension PushSession {
  /// The simulated air at the MTU both sides settled on: the raw capacity the goodput is compared with.
  func air(_ conditions: LinkConditions) -> AirTime {
    var negotiated = conditions
    negotiated.mtu = negotiatedMTU ?? conditions.mtu
    return AirTime(negotiated)
  }

  /// From the connect request to the link being ready (BlueZ only).
  var connectToReady: Duration? {
    (link as? BlueZCentral).flatMap { central in
      central.readyAt.flatMap { ready in central.connectStartedAt.map { ready - $0 } }
    }
  }

  func pathFigures(simulated: Bool) -> LinkPathFigures {
    LinkPathFigures(
      attMTU: negotiatedMTU, channel: dataChannel, link: (link as? BlueZCentral)?.linkFacts,
      simulated: simulated)
  }
}
