import OTACBOR

/// The SMP server's protocol logic, pure: a request message in, an answer (or a command the device
/// must carry out first) out. Requests the server can answer from an `SMPDeviceView` are answered at
/// once; the rest become `SMPDeviceCommand`s, answered through `respond(to:with:)`. Every request
/// gets an answer; an unknown group or command answers "not supported" (rc 8).
public struct SMPServer: Sendable {
  public let configuration: SMPServerConfiguration

  public init(configuration: SMPServerConfiguration = SMPServerConfiguration()) {
    self.configuration = configuration
  }

  /// What to do with one message.
  public enum Step: Equatable, Sendable {
    /// Send these bytes back.
    case respond([UInt8])
    /// Carry out the command, then answer with `respond(to:with:)`.
    case perform(SMPDeviceCommand, Pending)
    /// Nothing to answer (a response sent to the server, or fewer bytes than a header): the reason, for the log.
    case ignore(String)
  }

  /// The request a device command answers.
  public struct Pending: Equatable, Sendable {
    public let header: SMPHeader
  }

  /// One whole message, with the device as one value (tests, the fuzzer).
  public func handle(_ message: [UInt8], device: SMPDeviceView) -> Step {
    handle(message, facts: device.facts, images: { device.images })
  }

  /// One whole message (a UDP datagram, or what `SMPFrameAssembler` produced). `images` is asked
  /// for only by image state read and write (they report both slots' hashes); OS info and
  /// bootloader info answer from `facts`, which reads no slot.
  public func handle(_ message: [UInt8], facts: SMPDeviceFacts, images: () -> [SMPImageSlot]) -> Step {
    let header: SMPHeader
    do {
      header = try SMPHeader(bytes: message)
    } catch {
      return .ignore(error.description)
    }
    guard header.operation != .readResponse, header.operation != .writeResponse else {
      return .ignore("an SMP response sent to the server")
    }
    let body = message.dropFirst(SMPHeader.byteCount)
    guard header.version <= 1 else { return .respond(answer(header, .failure(.generic(.tooNew)))) }
    guard body.count == Int(header.length) else {
      return .respond(answer(header, .failure(.generic(.invalidValue))))
    }
    guard message.count <= configuration.bufferSize else {
      return .respond(answer(header, .failure(.generic(.messageTooLarge))))
    }
    guard header.operation.isRequest else {
      return .respond(answer(header, .failure(.generic(.notSupported))))
    }
    do {
      let decoded = try SMPBody(bytes: Array(body), limits: configuration.limits)
      switch try route(header, decoded, bodyBytes: body, facts, images) {
      case .answer(let entries): return .respond(answer(header, .success(entries)))
      case .device(let command): return .perform(command, Pending(header: header))
      }
    } catch {
      return .respond(answer(header, .failure(error)))
    }
  }

  /// The answer "busy" (rc 10) to a request the device will not take now (past its client's budget
  /// of slot hashing); nothing without a whole request header to answer to.
  public func refuseBusy(_ message: [UInt8]) -> Step {
    guard let header = try? SMPHeader(bytes: message), header.operation.isRequest else {
      return .ignore("not a request")
    }
    return .respond(answer(header, .failure(.generic(.busy))))
  }

  /// The answer "message too large" (rc 7) to a message cut short by its transport (a datagram
  /// over `bufferSize`); nothing without a whole header to answer to.
  public func refuseTooLarge(_ message: [UInt8]) -> Step {
    guard let header = try? SMPHeader(bytes: message), header.operation.isRequest else {
      return .ignore("a message over \(configuration.bufferSize) bytes")
    }
    return .respond(answer(header, .failure(.generic(.messageTooLarge))))
  }

  /// The answer to a device command the host carried out.
  public func respond(to pending: Pending, with result: Result<[CBOR.Entry], SMPFailure>) -> [UInt8] {
    answer(pending.header, result)
  }

  private enum Routed {
    case answer([CBOR.Entry])
    case device(SMPDeviceCommand)
  }

  private func route(
    _ header: SMPHeader, _ body: SMPBody, bodyBytes: ArraySlice<UInt8>, _ facts: SMPDeviceFacts,
    _ images: () -> [SMPImageSlot]
  ) throws(SMPFailure) -> Routed {
    let write = header.operation == .write
    switch (header.group, header.command, write) {
    case (SMPGroup.os, SMPGroup.OS.echo, _):
      // Read or write, as Zephyr, Mynewt and NuttX answer it; a map without "d" echoes nothing.
      guard !bodyBytes.isEmpty else { throw .generic(.invalidValue) }
      return .answer([CBOR.Entry(.text("r"), .text(try body.text("d") ?? ""))])
    case (SMPGroup.os, SMPGroup.OS.reset, true):
      return .device(.reset(force: try body.bool("force") ?? false))
    case (SMPGroup.os, SMPGroup.OS.parameters, false):
      return .answer([
        CBOR.Entry(.text("buf_size"), .unsigned(UInt64(configuration.bufferSize))),
        CBOR.Entry(.text("buf_count"), .unsigned(UInt64(configuration.bufferCount))),
      ])
    case (SMPGroup.os, SMPGroup.OS.info, false):
      let output = try SMPSystemInfoFormat.render(try body.text("format") ?? "s", facts.system)
      return .answer([CBOR.Entry(.text("output"), .text(output))])
    case (SMPGroup.os, SMPGroup.OS.bootloaderInfo, false):
      return .answer(try bootloaderInfo(query: try body.text("query"), facts))
    case (SMPGroup.image, SMPGroup.Image.state, false):
      return .answer(Self.imageState(SMPDeviceView(images: images(), facts: facts)))
    case (SMPGroup.image, SMPGroup.Image.state, true):
      // An empty hash is no hash (Zephyr's `zhash.len == 0`); another length than SHA-256's cannot match.
      let hash = try body.bytes("hash").flatMap { $0.isEmpty ? nil : $0 }
      if let hash, hash.count != 32 { throw .image(.invalidHash) }
      return .device(.stateWrite(hash: hash, confirm: try body.bool("confirm") ?? false))
    case (SMPGroup.image, SMPGroup.Image.upload, true):
      return .device(.upload(try Self.upload(body)))
    case (SMPGroup.image, SMPGroup.Image.erase, true):
      return .device(.erase(slot: try body.unsigned("slot") ?? 1))
    default:
      throw .generic(.notSupported)
    }
  }

  private func bootloaderInfo(query: String?, _ device: SMPDeviceFacts) throws(SMPFailure) -> [CBOR.Entry] {
    switch query {
    case nil:
      return [CBOR.Entry(.text("bootloader"), .text("MCUboot"))]
    case "mode":
      return [
        CBOR.Entry(.text("mode"), .int(configuration.bootloaderMode)),
        CBOR.Entry(.text("no-downgrade"), .bool(device.downgradesRefused)),
      ]
    default:
      throw .generic(.invalidValue)
    }
  }

  /// The body image state read answers (and state write, after its change).
  public static func imageState(_ device: SMPDeviceView) -> [CBOR.Entry] {
    let images: [CBOR] = device.images.map { slot in
      .map([
        CBOR.Entry(.text("image"), .unsigned(0)),
        CBOR.Entry(.text("slot"), .unsigned(slot.slot)),
        CBOR.Entry(.text("version"), .text(slot.version)),
        CBOR.Entry(.text("hash"), .bytes(slot.hash)),
        CBOR.Entry(.text("bootable"), .bool(slot.bootable)),
        CBOR.Entry(.text("pending"), .bool(slot.pending)),
        CBOR.Entry(.text("confirmed"), .bool(slot.confirmed)),
        CBOR.Entry(.text("active"), .bool(slot.active)),
        CBOR.Entry(.text("permanent"), .bool(slot.permanent)),
      ])
    }
    return [CBOR.Entry(.text("images"), .array(images)), CBOR.Entry(.text("splitStatus"), .unsigned(0))]
  }

  /// The fields as Zephyr's `img_mgmt_upload` decodes them: a key of the wrong type is rc 3, a missing
  /// `off` the image group's "invalid offset", missing `data` an empty chunk, an empty `sha` none.
  /// What needs the device (the first chunk's header, `len`, the `sha`'s length) it checks, in
  /// Zephyr's order.
  static func upload(_ body: SMPBody) throws(SMPFailure) -> SMPUpload {
    let image = try body.unsigned("image")
    let data = try body.bytes("data")
    let length = try body.unsigned("len")
    let sha = try body.bytes("sha")
    let upgrade = try body.bool("upgrade")
    guard let offset = try body.unsigned("off") else { throw .image(.invalidOffset) }
    return SMPUpload(
      image: image ?? 0, offset: offset, length: offset == 0 ? length : nil, data: data ?? [],
      sha: offset == 0 && sha?.isEmpty == false ? sha : nil, upgrade: upgrade ?? false)
  }

  /// A group's own error: version 2's `{"err": {"group", "rc"}}`, version 1's generic `{"rc"}` that
  /// Zephyr translates it to.
  private static func groupError(_ request: SMPHeader, group: UInt16, code: UInt16, generic: SMPReturnCode)
    -> CBOR
  {
    guard request.version >= 1 else {
      return .map([CBOR.Entry(.text("rc"), .unsigned(UInt64(generic.rawValue)))])
    }
    return .map([
      CBOR.Entry(
        .text("err"),
        .map([
          CBOR.Entry(.text("group"), .unsigned(UInt64(group))),
          CBOR.Entry(.text("rc"), .unsigned(UInt64(code))),
        ]))
    ])
  }

  /// The response message: the request's header with the response operation and the body's length.
  private func answer(_ request: SMPHeader, _ result: Result<[CBOR.Entry], SMPFailure>) -> [UInt8] {
    let body: CBOR
    switch result {
    case .success(let entries): body = .map(entries)
    case .failure(.generic(let code)):
      body = .map([CBOR.Entry(.text("rc"), .unsigned(UInt64(code.rawValue)))])
    case .failure(.image(let code)):
      body = Self.groupError(request, group: SMPGroup.image, code: code.rawValue, generic: code.generic)
    case .failure(.os(let code)):
      body = Self.groupError(request, group: SMPGroup.os, code: code.rawValue, generic: code.generic)
    }
    let operation = request.operation.isRequest ? request.operation.response : .writeResponse
    return SMPMessage.encoded(
      operation, version: min(request.version, 1), group: request.group, command: request.command,
      sequence: request.sequence, body)
  }
}
