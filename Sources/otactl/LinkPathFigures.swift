import OTABlueZ
import OTALink

/// The link a push ran on, as the kernel, bluetoothd and the controller reported it: the ATT MTU,
/// the L2CAP channel's MTUs and PHY when data went over the channel, and the connection's
/// parameters from the controller's events (interval, latency, timeout, data length, PHY) when
/// otactl could read them. For the closing lines and `--json`.
struct LinkPathFigures {
  var attMTU: Int?
  var channel: DataChannelReport?
  var link: LinkFacts?
  var simulated: Bool

  var dataPath: String { channel == nil ? "gatt" : "l2cap" }

  /// The transmit PHY: the channel's (BT_PHY), else the last PHY update's, else 1M for a link whose
  /// PHY never changed; nil when nothing is known of the link.
  var phy: String? {
    if let phy = channel?.parameters.phy { return phy }
    guard let link else { return nil }
    return link.phy.map { "\($0.tx)" } ?? "1M"
  }

  var description: String {
    let att = "ATT MTU \(attMTU.map(String.init) ?? "?")"
    var text: String
    if let channel {
      let parameters = channel.parameters
      text =
        "data over L2CAP PSM 0x\(String(channel.psm, radix: 16)), SDU \(parameters.sendMTU.map(String.init) ?? "?") "
        + "(receive \(parameters.receiveMTU.map(String.init) ?? "?")), PHY \(parameters.phy ?? "?"), \(att)"
    } else {
      text = "data over GATT, \(att)"
    }
    if let link { text += "; connection \(link)" }
    return text
  }
}
