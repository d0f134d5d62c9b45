import Logging
import OTAEngine
import OTALink
import OTAStorage
import OTAWire

/// The daemon's loop: waits on the link (and the stop signals), feeds what the central does to the
/// `ReceiverHost`, sends its answers, keeps its timer. Single-threaded; every storage call happens
/// here, in order.
public final class DeviceService {
  public enum Stop: Equatable, Sendable {
    /// SIGTERM or SIGINT: stop cleanly.
    case signal(Int32)
    /// ACTIVATE was answered: restart into the new slot.
    case restart
  }

  public private(set) var host: ReceiverHost
  let link: any PeripheralLink
  let logger: Logger
  private let clock = ContinuousClock()
  private let started: ContinuousClock.Instant
  private var timer: Duration?

  public init(host: ReceiverHost, link: any PeripheralLink, logger: Logger) {
    self.host = host
    self.link = link
    self.logger = logger
    started = clock.now
  }

  private var now: Duration { clock.now - started }

  public func run(stopSignals: StopSignals?) throws -> Stop {
    while true {
      let deadline = [timer, link.nextDeadline].compactMap { $0 }.min()
      let descriptors = link.descriptors + (stopSignals.map { [$0.descriptor] } ?? [])
      let readable = try Poller.wait(for: descriptors, timeout: deadline.map { max(.zero, $0 - now) })
      if let stopSignals, readable.contains(stopSignals.descriptor) {
        return .signal(stopSignals.take())
      }
      let events = try link.service(readable: readable, now: now) { characteristic in
        switch characteristic {
        case .info: host.info().encoded
        case .firmwareRevision: Array(host.info().runningVersion.description.utf8)
        default: []
        }
      }
      for event in events {
        if try handle(event) { return .restart }
      }
      if let due = timer, now >= due {
        timer = nil
        if try apply(try host.handle(.tick(now: now))) { return .restart }
      }
    }
  }

  /// Returns true when the device must restart.
  private func handle(_ event: PeripheralEvent) throws -> Bool {
    switch event {
    case .connected(let mtu):
      logger.info("central connected", metadata: ["mtu": "\(mtu)"])
      return try apply(try host.handle(.connected(mtu: mtu)))
    case .disconnected:
      logger.info(
        "central disconnected", metadata: ["committed": "\(host.engine.transferStatus.committedOffset)"])
      timer = nil
      return try apply(try host.handle(.disconnected))
    case .controlWrite(let bytes):
      logRequest(bytes)
      return try apply(try host.handle(.control(bytes, now: now)))
    case .dataWrite(let bytes):
      return try apply(try host.handle(.data(bytes, now: now)))
    }
  }

  private func apply(_ outputs: [ReceiverHost.Output]) throws -> Bool {
    var restart = false
    for output in outputs {
      switch output {
      case .notify(let bytes):
        logResponse(bytes)
        link.notify(bytes)
      case .armTimer(let due):
        timer = due
      case .restart:
        restart = true
      }
    }
    if restart {
      logger.notice("restarting into slot \(host.boot.running)")
      link.disconnect()
    }
    return restart
  }

  private func logRequest(_ bytes: [UInt8]) {
    guard let request = try? Request(bytes: bytes) else { return }
    switch request {
    case .prepare(let size, let crc32, let version):
      logger.info(
        "PREPARE",
        metadata: ["size": "\(size)", "crc32": "\(String(crc32, radix: 16))", "version": "\(version)"])
    case .window(let offset, let length, _):
      logger.debug("WINDOW", metadata: ["offset": "\(offset)", "length": "\(length)"])
    default:
      logger.info("\(request.opcode)")
    }
  }

  private func logResponse(_ bytes: [UInt8]) {
    guard let response = try? Response(bytes: bytes) else { return }
    let name =
      Opcode(rawValue: response.requestOpcode)?.description
      ?? "0x\(String(response.requestOpcode, radix: 16))"
    if response.status == .success {
      if case .offset(let offset) = response.payload {
        logger.debug("\(name) committed", metadata: ["offset": "\(offset)"])
      } else {
        logger.info("\(name) succeeded")
      }
    } else {
      logger.warning("\(name) answered \(response.status)", metadata: ["payload": "\(response.payload)"])
    }
  }
}
