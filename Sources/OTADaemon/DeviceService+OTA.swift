import Logging
import OTABoot
import OTAEngine
import OTALink
import OTANordicDFU
import OTAReceiverHost
import OTASMP
import OTASMPServer
import OTAStorage
import OTASystem
import OTAWire

/// The OTA protocol in the daemon's loop: its requests and data writes carried out on the host
/// (whose engine is the protocol's adapter over the update transaction), its answers sent and
/// logged, its central's departure.
extension DeviceService {
  func otaControl(_ bytes: [UInt8]) throws -> Bool {
    let restart = try apply(try host.handle(.control(bytes, now: now)))
    if let supervisor = trial, confirmedElsewhere(supervisor) {
      logger.notice(
        supervisor.subject == .trial
          ? "the central confirmed the trial: slot \(host.running) is good"
          : "a paired central confirmed the rebuilt boot state: slot \(host.running) is good; updates go on"
      )
      _ = try supervise { $0.confirmed() }
      trial = nil
    }
    return restart
  }

  /// A data write of the OTA protocol, carried out on the host.
  func otaData(_ bytes: [UInt8]) throws -> Bool {
    let rejectedBefore = host.engine.statistics.operationsRejected
    let restart = try apply(try host.handle(.data(bytes, now: now)))
    logRejectedOperation(since: rejectedBefore)
    return restart
  }

  /// The OTA central went (or a fault dropped it): the counts for the log, and the host told.
  func handleDisconnect() throws -> Bool {
    logger.info(
      "central disconnected",
      metadata: [
        "committed": "\(host.engine.transferStatus.committedOffset)",
        "chunks-dropped": "\(host.engine.statistics.chunksDropped)",
        "missing-reports": "\(host.engine.statistics.missingReports)",
        "spurious-reports": "\(host.engine.statistics.spuriousReports)",
        "operations-applied": "\(host.engine.statistics.operationsApplied)",
        "operations-rejected": "\(host.engine.statistics.operationsRejected)",
        "frames-decoded": "\(host.engine.statistics.framesDecoded)",
        "block-hash-answers": "\(host.engine.statistics.blockHashAnswers)",
        "block-hash-bytes-read": "\(host.engine.statistics.blockHashBytesRead)",
        "reorder-window": "\(host.engine.reorderWindow)",
      ])
    observe(.disconnected(committed: host.engine.transferStatus.committedOffset))
    timer = nil
    lastStorageFailure = nil
    return try apply(try host.handle(.disconnected))
  }

  func apply(_ outputs: [ReceiverHost.Output]) throws -> Bool {
    logStorageFailures()
    var restart = false
    for output in outputs {
      switch output {
      case .notify(let bytes):
        logResponse(bytes)
        sendAnswer(bytes)
      case .armTimer(let due):
        timer = due
      case .restart:
        restart = true
      }
    }
    if restart {
      restartReason = "ACTIVATE: \(host.boot.plan)"
      logger.notice("restarting into \(host.boot.plan)")
      observe(.restart(reason: restartReason))
      link.disconnect()
    }
    return restart
  }

  /// A data operation that broke a rule (hostile or broken central): the first of a connection at
  /// warning, the rest at debug (a flood must not flood the log), the count at disconnect.
  func logRejectedOperation(since before: Int) {
    let now = host.engine.statistics.operationsRejected
    guard now > before, let rejection = host.engine.lastRejection else { return }
    if now - rejectedAtConnect == 1 {
      logger.warning("dropped a data operation: \(rejection)")
    } else {
      logger.debug("dropped a data operation: \(rejection)")
    }
  }

  /// Each storage failure with its operation, path and strerror, and what to do: the central only
  /// hears "storage error". A run of the same failure is logged once per connection.
  func logRequest(_ bytes: [UInt8]) {
    guard let request = try? Request(bytes: bytes) else { return }
    if case .window(let offset, let length, _) = request {
      observe(.request("WINDOW", offset: offset, length: length))
    } else if case .prepare(let size, _, _) = request {
      observe(.request("PREPARE", offset: nil, length: size))
    } else {
      observe(.request("\(request.opcode)", offset: nil, length: nil))
    }
    switch request {
    case .prepare(let size, let crc32, let version):
      logger.info(
        "PREPARE",
        metadata: ["size": "\(size)", "crc32": "\(String(crc32, radix: 16))", "version": "\(version)"])
    case .window(let offset, let length, _):
      logger.debug("WINDOW", metadata: ["offset": "\(offset)", "length": "\(length)"])
    case .blockHashes(let asked):
      // Up to 256 a push: debug, like WINDOW; the disconnect line counts them.
      logger.debug(
        "BLOCK HASHES",
        metadata: [
          "block-size": "\(asked.blockSize)", "first": "\(asked.firstBlock)",
          "max-count": "\(asked.maxCount)",
        ])
    default:
      logger.info("\(request.opcode)")
    }
  }

  func logResponse(_ bytes: [UInt8]) {
    guard let response = try? Response(bytes: bytes) else { return }
    let name =
      Opcode(rawValue: response.requestOpcode)?.description
      ?? "0x\(String(response.requestOpcode, radix: 16))"
    observeResponse(name, response)
    if response.status == .success {
      if case .offset(let offset) = response.payload {
        logger.debug("\(name) committed", metadata: ["offset": "\(offset)"])
      } else if case .blockHashes(let page) = response.payload {
        logger.debug(
          "\(name) answered",
          metadata: [
            "first": "\(page.firstBlock)", "hashes": "\(page.hashes.count)", "total": "\(page.totalBlocks)",
          ])
      } else {
        logger.info("\(name) succeeded")
      }
    } else {
      let judged =
        response.requestOpcode == Opcode.validate.rawValue
        || response.requestOpcode == Opcode.activate.rawValue
      if response.status == .deferred, let (verdict, _) = host.lastActivationVerdict,
        case .hold(let reason, let detail, _) = verdict
      {
        logger.notice("\(name) deferred (\(reason)): \(detail); the device keeps the activation")
        observe(.activation("ACTIVATE deferred (\(reason)): \(detail)"))
      } else if judged, let reason = host.lastImageRejection {
        // The status says little; the reason is what the device's owner needs.
        logger.warning("\(name) refused the image: \(reason)")
      } else if response.status == .busy, let holder = host.transaction.lease?.owner, holder != .ota {
        logger.warning("\(name) refused: \(holder) is updating the device (one protocol at a time)")
      } else {
        logger.warning("\(name) answered \(response.status)", metadata: ["payload": "\(response.payload)"])
      }
    }
  }
}

extension DeviceService {
  /// An answer, for the observer: the committed offset a window or STATUS answer carries, and the
  /// reason VALIDATE or ACTIVATE refused the image.
  func observeResponse(_ name: String, _ response: Response) {
    var offset: UInt32?
    switch response.payload {
    case .offset(let committed): offset = committed
    case .status(let status): offset = status.committedOffset
    default: offset = nil
    }
    let judged =
      response.requestOpcode == Opcode.validate.rawValue || response.requestOpcode == Opcode.activate.rawValue
    observe(
      .response(
        name, status: "\(response.status)", offset: offset,
        reason: response.status != .success && judged ? host.lastImageRejection.map { "\($0)" } : nil))
  }
}
