import OTALab
import Synchronization

/// Class mode: a seat and a device of their own for each student who joins with the class code,
/// up to the seats; each device made and started at the join, all stopped and removed at the end.
final class LabClassroom: Sendable {
  let options: LabRigOptions
  private let table: Mutex<LabSessionTable>
  private let models = Mutex<[String: LabModel]>([:])

  init(code: String, seats: Int, perAddress: Int, options: LabRigOptions) {
    self.options = options
    table = Mutex(LabSessionTable(code: code, capacity: seats, perAddress: perAddress))
  }

  var code: String { table.withLock { $0.code } }
  var capacity: Int { table.withLock { $0.capacity } }
  var taken: Int { table.withLock { $0.seats.count } }

  /// Seats `name`, joining from `address`, and starts their device; the session token for their cookie.
  func join(code: String, name: String, address: String) throws -> LabSessionTable.Seat {
    let token = Self.newToken()
    let now = ContinuousClock.now - Self.started
    let seconds = Double(now.components.seconds) + Double(now.components.attoseconds) / 1e18
    let seat = try table.withLock { table throws(LabSessionTable.Refusal) in
      try table.join(code: code, name: name, token: token, address: address, now: seconds)
    }
    var made: LabModel?
    do {
      let model = try LabModel(options: options, seat: seat.name)
      made = model
      try model.start()
      models.withLock { $0[token] = model }
      return seat
    } catch {
      // Its folder (and whatever started) goes with the seat.
      made?.stop()
      table.withLock { $0.leave(token: token) }
      throw LabError("your device did not start (\(error)): tell your teacher")
    }
  }

  /// The clock's origin for pacing wrong codes.
  static let started = ContinuousClock.now

  /// The device of the session `token` holds, nil for no such session.
  func model(token: String?) -> LabModel? {
    guard let seat = table.withLock({ $0.seat(token: token) }) else { return nil }
    return models.withLock { $0[seat.token] }
  }

  func stopAll() {
    for model in models.withLock({ Array($0.values) }) { model.stop() }
  }

  /// 128 random bits as hex: a session no one guesses.
  static func newToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in
      let word = String(generator.next() as UInt32, radix: 16)
      return String(repeating: "0", count: 8 - word.count) + word
    }.joined()
  }

  /// A class code to read out: six letters and digits, none that look alike.
  static func newCode() -> String {
    let alphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")
    var generator = SystemRandomNumberGenerator()
    return String((0..<6).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
  }
}
