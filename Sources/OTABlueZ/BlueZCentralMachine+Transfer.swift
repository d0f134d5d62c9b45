import Logging
import OTADBus
import OTALink

/// Once ready: control-point writes one at a time, data chunks, the long read of Info.
extension BlueZCentralMachine {
  // MARK: Writing and reading

  mutating func writeControl(_ bytes: [UInt8]) {
    guard case .ready(var ready) = phase else { return }
    ready.controlQueue.append(bytes)
    phase = .ready(ready)
    sendNextControl()
  }

  mutating func controlWritten() {
    guard case .ready(var ready) = phase else { return }
    ready.controlInFlight = false
    phase = .ready(ready)
    sendNextControl()
  }

  mutating func sendNextControl() {
    guard case .ready(var ready) = phase, !ready.controlInFlight, !ready.controlQueue.isEmpty else { return }
    let bytes = ready.controlQueue.removeFirst()
    ready.controlInFlight = true
    phase = .ready(ready)
    start(
      .writeControl,
      BlueZRequest(
        path: ready.characteristics.control, interface: BlueZ.gattCharacteristic, method: "WriteValue",
        arguments: [.bytes(bytes), .vardict(["type": .string("request")])]))
  }

  mutating func writeData(_ bytes: [UInt8]) {
    guard case .ready(var ready) = phase else { return }
    ready.dataQueue.append(bytes)
    phase = .ready(ready)
    flushData()
  }

  /// Moves queued chunks towards the device: into the socket (the shell writes until it is full),
  /// or as WriteValue commands up to the limit in flight.
  mutating func flushData() {
    guard case .ready(var ready) = phase, !ready.dataQueue.isEmpty else { return }
    switch ready.transport {
    case .socket:
      out.append(.sendData(ready.dataQueue))
    case .channel:
      out.append(.sendChannelData(ready.dataQueue))
    case .writeCommands(var inFlight):
      while inFlight < configuration.commandsInFlight, !ready.dataQueue.isEmpty {
        let bytes = ready.dataQueue.removeFirst()
        inFlight += 1
        start(
          .writeData,
          BlueZRequest(
            path: ready.characteristics.data, interface: BlueZ.gattCharacteristic, method: "WriteValue",
            arguments: [.bytes(bytes), .vardict(["type": .string("command")])]))
      }
      ready.transport = .writeCommands(inFlight: inFlight)
      phase = .ready(ready)
    }
  }

  mutating func dataSent(_ count: Int) {
    guard case .ready(var ready) = phase, ready.transport == .socket || ready.transport == .channel else {
      return
    }
    ready.dataQueue.removeFirst(min(count, ready.dataQueue.count))
    phase = .ready(ready)
    guard !ready.dataQueue.isEmpty else {
      stopTimer(.dataStall)
      return
    }
    out.append(.log(.trace, "data socket full (\(ready.dataQueue.count) queued)"))
    startTimer(.socketRoom, after: .milliseconds(2))
    // The stall clock starts at the first full socket and again at every bit of progress.
    if count > 0 || !runningTimers.contains(.dataStall) {
      startTimer(.dataStall, after: configuration.dataStallTimeout)
    }
  }

  /// Data waited `dataStallTimeout` and the path took none of it: the channel is dropped (`auto`
  /// reconnects and goes on over GATT), the data socket's connection lost.
  mutating func dataStalled() {
    guard case .ready(let ready) = phase, !ready.dataQueue.isEmpty else { return }
    let seconds = configuration.dataStallTimeout.components.seconds
    let why = "nothing taken for \(seconds) s, \(ready.dataQueue.count) waiting"
    switch ready.transport {
    case .channel: channelDropped(why)
    case .socket, .writeCommands: lose("the data socket stalled: \(why)")
    }
  }

  mutating func dataCommandWritten() {
    guard case .ready(var ready) = phase, case .writeCommands(let inFlight) = ready.transport else { return }
    ready.transport = .writeCommands(inFlight: max(0, inFlight - 1))
    phase = .ready(ready)
    flushData()
  }

  mutating func loopTurn() {
    flushData()
    guard case .ready(let ready) = phase else { return }
    var waiting = ready.dataQueue.count
    if case .writeCommands(let inFlight) = ready.transport { waiting += inFlight }
    let depth = ready.transport == .channel ? configuration.channelQueueDepth : configuration.queueDepth
    out.append(.emit(.writable(depth - waiting)))
  }

  mutating func readInfo() {
    guard case .ready(var ready) = phase, ready.infoRead == nil else { return }
    ready.infoRead = []
    phase = .ready(ready)
    readInfo(at: 0, ready)
  }

  mutating func readInfo(at offset: Int, _ ready: Ready) {
    let options: [String: DBusValue] = offset == 0 ? [:] : ["offset": .uint16(UInt16(offset))]
    start(
      .readInfo(offset: offset),
      BlueZRequest(
        path: ready.characteristics.info, interface: BlueZ.gattCharacteristic, method: "ReadValue",
        arguments: [.vardict(options)]))
  }

  /// One answer of Info's long read (`appendLongRead`).
  mutating func infoRead(offset: Int, _ bytes: [UInt8]) {
    guard let (read, ready, complete) = appendLongRead(\.infoRead, offset: offset, bytes) else { return }
    if complete { infoComplete(read) } else { readInfo(at: read.count, ready) }
  }
}
