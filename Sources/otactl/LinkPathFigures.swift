import OTALink

/// The link a push ran on, as the kernel and bluetoothd reported it: the ATT MTU, and the L2CAP
/// channel's MTUs and PHY when data went over the channel. For the closing lines and `--json`.
struct LinkPathFigures {
  var attMTU: Int?
  var channel: DataChannelReport?
  var simulated: Bool

  var dataPath: String { channel == nil ? "gatt" : "l2cap" }

  var description: String {
    let att = "ATT MTU \(attMTU.map(String.init) ?? "?")"
    guard let channel else { return "data over GATT, \(att)" }
    let parameters = channel.parameters
    return
      "data over L2CAP PSM 0x\(String(channel.psm, radix: 16)), SDU \(parameters.sendMTU.map(String.init) ?? "?") "
      + "(receive \(parameters.receiveMTU.map(String.init) ?? "?")), PHY \(parameters.phy ?? "?"), \(att)"
  }
}
