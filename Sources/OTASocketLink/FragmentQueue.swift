/// L2CAP frames waiting to go on the air one link-layer packet at a time, first in first out: the
/// head frame's next packet carries at most `dataLength` of its bytes, and the frame has arrived
/// when its last packet has gone. Pure: the link decides when a packet goes.
struct FragmentQueue<Item> {
  let dataLength: Int
  private var items: [(item: Item, left: Int)] = []
  private var start = 0

  init(dataLength: Int) { self.dataLength = dataLength }

  var isEmpty: Bool { start == items.count }
  var count: Int { items.count - start }

  /// The frame whose packets go next.
  var head: Item? { isEmpty ? nil : items[start].item }

  /// The payload of the next packet, or nil when nothing waits.
  var nextPacket: Int? { isEmpty ? nil : min(items[start].left, dataLength) }

  /// Queues `item`, an L2CAP frame of `frameLength` bytes (at least one packet, even if empty).
  mutating func append(_ item: Item, frameLength: Int) { items.append((item, max(frameLength, 1))) }

  /// Sends the next packet; the item whose frame it completed, if it did.
  mutating func sendPacket() -> Item? {
    guard !isEmpty else { return nil }
    items[start].left -= min(items[start].left, dataLength)
    guard items[start].left == 0 else { return nil }
    let item = items[start].item
    start += 1
    if start == items.count {
      items.removeAll(keepingCapacity: true)
      start = 0
    }
    return item
  }

  mutating func removeAll() {
    items.removeAll()
    start = 0
  }
}
