import OTABoot
import OTACBOR
import OTAEngine
import OTAReceiverHost
import OTASMP
import OTAStorage
import OTASystem
import OTAWire

/// The SMP server on the device: `SMPServer` decodes and answers, this carries out what needs the
/// device, on the SAME `ReceiverHost` the OTA protocol uses (its storage, journal, durable windows,
/// image checks and boot control). Slot 0 is the running slot, slot 1 the other, as MCUboot's swap
/// modes show them.
public struct SMPDevice: Sendable {
  public struct Output: Equatable, Sendable {
    /// The answer to send back (nil: the message is not answered, see `SMPServer.Step.ignore`).
    public var response: [UInt8]?
    /// Restart after sending (OS reset), as after ACTIVATE.
    public var restart = false
    /// For the log.
    public var note: String?
  }

  /// The upload this server is carrying on: the transfer's identity the host gave it, and the bytes
  /// received (written, not all committed yet). One upload context whatever carries SMP (UDP, any
  /// central), as Zephyr's img_mgmt keeps one for the image group.
  struct Upload: Equatable, Sendable {
    var id: TransferID
    var received: UInt32
  }

  public let server: SMPServer
  public var system: SMPSystemInfo
  var upload: Upload?

  public init(
    configuration: SMPServerConfiguration = SMPServerConfiguration(), system: SMPSystemInfo = SMPSystemInfo()
  ) {
    server = SMPServer(configuration: configuration)
    self.system = system
  }

  /// One whole SMP message. While another protocol's session holds the device (an OTA central, a
  /// Nordic DFU central, active within `UpdateTransaction.leaseTimeout`) SMP changes nothing and
  /// resets nothing: rc 10, busy (one protocol at a time, docs/SMP.md).
  ///
  /// Image state read and write report both slots' image hashes, which the host computes once per
  /// state of a slot; what it does compute is charged to `client`'s work budget, and a client past
  /// it is answered rc 10, busy, until its budget refills (bounded work per request).
  public mutating func handle(_ message: [UInt8], host: inout ReceiverHost, client: String = "SMP client")
    throws(StorageError) -> Output
  {
    let now = host.transaction.now
    if Self.reportsImages(message), !host.workBudget.admits(client, now: now),
      case .respond(let busy) = server.refuseBusy(message)
    {
      return Output(response: busy, note: "\(client) is past its budget of slot hashing: busy")
    }
    let hashedBefore = host.imageHashBytesRead
    defer { host.workBudget.charge(client, bytes: host.imageHashBytesRead - hashedBefore, now: now) }
    let facts = facts(host)
    switch server.handle(message, facts: facts, images: { images(&host) }) {
    case .ignore(let why):
      return Output(response: nil, note: why)
    case .respond(let bytes):
      return Output(response: bytes)
    case .perform(let command, let pending):
      if host.transaction.heldByAnother(.smp) {
        let holder = host.transaction.lease.map { "\($0.owner)" } ?? "another protocol"
        return Output(
          response: server.respond(to: pending, with: .failure(.generic(.busy))),
          note: "\(holder) is updating the device")
      }
      var result: Result<[CBOR.Entry], SMPFailure>
      var restart = false
      var note: String?
      do {
        switch command {
        case .reset:
          result = .success([])
          restart = true
        case .upload(let upload):
          result = try self.upload(upload, host: &host)
        case .stateWrite(let hash, let confirm):
          result = try stateWrite(hash: hash, confirm: confirm, host: &host)
        case .erase(let slot):
          result = try erase(slot: slot, host: &host)
        }
      } catch .powerCut {
        throw .powerCut
      } catch {
        // A storage failure is answered (the image group's "flash write failed") and logged: it
        // never ends the daemon. What this upload held in memory is dropped; its journal stands.
        upload = nil
        result = .failure(.image(.flashWriteFailed))
        note = "storage failed: \(error.explanation)"
      }
      return Output(response: server.respond(to: pending, with: result), restart: restart, note: note)
    }
  }

  /// What image state read reports now (the slots' hashes from the host's cache).
  public func view(_ host: inout ReceiverHost) -> SMPDeviceView {
    SMPDeviceView(images: images(&host), facts: facts(host))
  }

  /// What OS info and bootloader info report: no slot is read.
  func facts(_ host: ReceiverHost) -> SMPDeviceFacts {
    SMPDeviceFacts(system: system, downgradesRefused: !host.imageCheck.policy.allowDowngrade)
  }

  /// Image group (1), state (0): read or write, both answer with the slots' hashes.
  static func reportsImages(_ message: [UInt8]) -> Bool {
    message.count >= SMPHeader.byteCount && message[4] == 0 && message[5] == 1 && message[7] == 0
  }
}

extension SMPDevice {
  /// OS info's answers from `uname(2)`.
  public static func systemInfo() -> SMPSystemInfo {
    let name = SystemName.current()
    var info = SMPSystemInfo()
    info.kernelName = name.kernelName
    info.nodeName = name.nodeName
    info.kernelRelease = name.release
    info.kernelVersion = name.version
    info.machine = name.machine
    info.processor = name.machine
    info.hardwarePlatform = name.machine
    info.operatingSystem = "otad"
    return info
  }
}
