import OTAWire

/// The shape of an LE credit-based L2CAP channel (CoC) on the simulated air: what the data path
/// costs when image data goes in SDUs instead of ATT writes (docs/PROTOCOL.md, "Data over an
/// L2CAP channel").
///
/// An SDU is its 2-byte length and its bytes, cut into K-frames whose information payload is at
/// most the receiver's MPS; each K-frame travels as an L2CAP frame (4-byte basic header) in
/// link-layer packets of at most the data length, like any L2CAP frame. Each K-frame costs the
/// sender one credit; the receiver hands credits back in an LE Flow Control Credit packet, a
/// 12-byte signaling frame (basic header, command header, CID and count) in the peripheral's own
/// packets. Linux gives `MTU / MPS + 1` credits and returns what was used each time an SDU is
/// whole, or when the sender has used them all (l2cap_chan_le_send_credits); its host answers
/// through HCI, so the credits leave in the peripheral's first free packet of the next connection
/// event, not within the same T_IFS.
public struct ChannelShape: Equatable, Sendable {
  /// The SDU limit: the receiver's MTU (otad: 4100, one chunk of 4096 image bytes).
  public var sdu: Int
  /// The receiver's MPS; nil: the data length less the basic header (Linux takes the controller's
  /// ACL size, 251 with Data Length Extension, so that a K-frame fills one link-layer packet).
  public var mps: Int?
  /// The credits the receiver grants and keeps topping up; nil: Linux's `sdu / mps + 1`.
  public var credits: Int?

  /// The SDU length field at the head of an SDU's first K-frame.
  public static let sduLengthField = 2
  /// The L2CAP basic header of every K-frame.
  public static let basicHeader = 4
  /// An LE Flow Control Credit packet: basic header 4, command header 4, CID 2, credits 2.
  public static let creditFrameLength = 12
  /// The largest SDU the simulated device takes (otad's receive MTU over BlueZ).
  public static let deviceReceiveMTU = 4100

  public init(sdu: Int = 4100, mps: Int? = nil, credits: Int? = nil) {
    self.sdu = sdu
    self.mps = mps
    self.credits = credits
  }
}

extension AirTime {
  /// The MPS this link's channel uses.
  public func channelMPS(_ shape: ChannelShape) -> Int {
    max(23, shape.mps ?? dataLength - ChannelShape.basicHeader)
  }

  /// The credits the receiver grants on this link's channel.
  public func channelCredits(_ shape: ChannelShape) -> Int {
    max(1, shape.credits ?? shape.sdu / channelMPS(shape) + 1)
  }

  /// The L2CAP frame lengths (basic header included) of the K-frames one SDU of `sduLength` bytes
  /// takes.
  public func kFrames(sduLength: Int, _ shape: ChannelShape) -> [Int] {
    let mps = channelMPS(shape)
    var left = sduLength + ChannelShape.sduLengthField
    var frames: [Int] = []
    repeat {
      frames.append(min(left, mps) + ChannelShape.basicHeader)
      left -= min(left, mps)
    } while left > 0
    return frames
  }

  /// SDU bytes per second carried by SDUs of `sduLength` bytes back to back over the channel, in
  /// events of at most `packetLimit` central packets (nil: air time only), with the credit flow
  /// above: the figure a channel's goodput is compared with, as `valueBytesPerSecond` is GATT's.
  public func channelBytesPerSecond(
    sduLength: Int, _ shape: ChannelShape, packetLimit: Int?, airLimited: Bool = true
  ) -> Double {
    guard packetLimit != nil || airLimited else { return .infinity }
    let frames = kFrames(sduLength: sduLength, shape)
    var sender = ChannelSender(credits: channelCredits(shape))
    var frameLeft = 0
    var frameIndex = 0
    var delivered = 0
    for _ in 0..<Self.eventsMeasured {
      sender.newEvent()
      var event = ConnectionEvent(air: self, packetLimit: packetLimit, airLimited: airLimited)
      while true {
        if frameLeft == 0, sender.credits > 0 {
          sender.credits -= 1
          frameLeft = frames[frameIndex]
        }
        let central = frameLeft > 0 ? min(frameLeft, dataLength) : 0
        let peripheral = sender.returnable > 0 ? ChannelShape.creditFrameLength : 0
        guard central > 0 || peripheral > 0, event.fit(central: central, peripheral: peripheral) else {
          break
        }
        if peripheral > 0 { sender.creditsArrived() }
        guard central > 0 else { continue }
        frameLeft -= central
        guard frameLeft == 0 else { continue }
        frameIndex += 1
        let endsSDU = frameIndex == frames.count
        sender.kFrameArrived(endsSDU: endsSDU)
        if endsSDU {
          delivered += sduLength
          frameIndex = 0
        }
      }
    }
    return Double(delivered) / (Double(Self.eventsMeasured) * intervalMicroseconds / 1e6)
  }

  /// The capacity of the data path these conditions use, in payload bytes per second: the
  /// channel's (SDUs of its size) when there is one, else GATT's (`rawPayloadBytesPerSecond`).
  public var dataPathBytesPerSecond: Double {
    guard let shape = conditions.channel else { return rawPayloadBytesPerSecond }
    return channelBytesPerSecond(
      sduLength: shape.sdu, shape, packetLimit: conditions.packetsPerEvent,
      airLimited: conditions.airTimePacing)
  }
}

/// A channel's credit flow, as both the capacity model and the simulated link run it: a credit
/// spent per K-frame; the receiver returns those it has taken when an SDU is whole or the sender
/// has none left, and they reach the sender from the next connection event on.
struct ChannelSender: Equatable, Sendable {
  /// The credits the receiver grants.
  let granted: Int
  /// Credits the sender holds.
  var credits: Int
  /// K-frames the receiver has taken and not yet returned a credit for.
  var unreturned = 0
  /// Credits the receiver's host has sent towards its controller: they go out from the next event.
  var owed = 0
  /// Credits the receiver's controller has and sends in its next free packet.
  var returnable = 0

  init(credits: Int) {
    granted = credits
    self.credits = credits
  }

  /// A connection event begins: what the receiver's host owed has reached its controller.
  mutating func newEvent() {
    returnable += owed
    owed = 0
  }

  /// The credit packet crossed: the sender may use them.
  mutating func creditsArrived() {
    credits += returnable
    returnable = 0
  }

  /// A K-frame crossed: the receiver returns its credits with the SDU's last one, or when the
  /// sender can have none left.
  mutating func kFrameArrived(endsSDU: Bool) {
    unreturned += 1
    guard endsSDU || unreturned >= granted else { return }
    owed += unreturned
    unreturned = 0
  }
}
