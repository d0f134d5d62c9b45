/// Class mode's seats: who joined with the class code, under which name, holding which session
/// token (the page's cookie). Pure: the caller makes the tokens (random) and starts the devices.
public struct LabSessionTable: Sendable {
  public struct Seat: Equatable, Sendable {
    public var token: String
    public var name: String
    /// The address the student joined from ("" when the server could not tell).
    public var address: String

    public init(token: String, name: String, address: String = "") {
      self.token = token
      self.name = name
      self.address = address
    }
  }

  /// Why a join is refused; each says what to do.
  public enum Refusal: Error, Equatable, CustomStringConvertible, Sendable {
    case wrongCode
    case badName(String)
    case nameTaken(String)
    case full(seats: Int)
    case tooManyFromAddress(seats: Int)
    case tooManyWrongCodes(retryAfterSeconds: Int)

    public var description: String {
      switch self {
      case .wrongCode: "wrong class code: ask your teacher for the code ota-lab printed"
      case .badName(let why): "that name will not do: \(why)"
      case .nameTaken(let name): "the name \"\(name)\" is taken in this class: choose another"
      case .full(let seats):
        "the class is full (\(seats) seats): ask your teacher to start ota-lab with more --seats"
      case .tooManyFromAddress(let seats):
        "this computer already holds \(seats) seats: share one of its devices, or ask your teacher to start ota-lab with more --seats-per-address"
      case .tooManyWrongCodes(let seconds):
        "too many wrong class codes from this computer: try again in \(seconds) s with the code ota-lab printed"
      }
    }
  }

  public let code: String
  public let capacity: Int
  /// At most this many seats held from one address: one student cannot fill the class.
  public let perAddress: Int
  public private(set) var seats: [Seat] = []
  /// Wrong codes per address in the current minute: guessing the code is throttled, not open-ended.
  private var wrongCodes: [String: (minute: Int, count: Int)] = [:]

  public static let nameLimit = 32
  /// Wrong codes one address may give in a minute before it must wait for the next.
  public static let wrongCodesPerMinute = 5

  public init(code: String, capacity: Int, perAddress: Int = 3) {
    self.code = code
    self.capacity = capacity
    self.perAddress = perAddress
  }

  /// Seats `name` under `token` when `code` is the class's, the name is fit and free, and a seat is
  /// (in the class, and for `address`). `now` (seconds, any epoch) paces wrong codes per address.
  public mutating func join(
    code given: String, name rawName: String, token: String, address: String = "", now: Double = 0
  ) throws(Refusal) -> Seat {
    let minute = Int((now / 60).rounded(.down))
    if let record = wrongCodes[address], record.minute == minute, record.count >= Self.wrongCodesPerMinute {
      throw .tooManyWrongCodes(retryAfterSeconds: max(1, 60 - Int(now.truncatingRemainder(dividingBy: 60))))
    }
    guard Self.sameCode(given, code) else {
      let record = wrongCodes[address]
      let count = record?.minute == minute ? (record?.count ?? 0) + 1 : 1
      if wrongCodes.count > 4096 { wrongCodes = wrongCodes.filter { $0.value.minute == minute } }
      wrongCodes[address] = (minute, count)
      throw .wrongCode
    }
    let name = rawName.trimmingCharacters(inSet: " \t")
    if let why = Self.unfit(name) { throw .badName(why) }
    if seats.contains(where: { $0.name.lowercased() == name.lowercased() }) { throw .nameTaken(name) }
    guard seats.count < capacity else { throw .full(seats: capacity) }
    if !address.isEmpty, seats.count(where: { $0.address == address }) >= perAddress {
      throw .tooManyFromAddress(seats: perAddress)
    }
    let seat = Seat(token: token, name: name, address: address)
    seats.append(seat)
    return seat
  }

  /// Frees the seat `token` holds (its device would not start).
  public mutating func leave(token: String) { seats.removeAll { $0.token == token } }

  /// The seat a session token holds; nil for no token or one this class never gave.
  public func seat(token: String?) -> Seat? {
    guard let token, !token.isEmpty else { return nil }
    return seats.first { Self.sameCode($0.token, token) }
  }

  /// Why a name will not do: empty, too long, or with characters other than letters, digits,
  /// spaces and `-_.`; nil when it will.
  static func unfit(_ name: String) -> String? {
    if name.isEmpty { return "give a name (your own, or your group's)" }
    if name.count > nameLimit { return "at most \(nameLimit) characters" }
    let allowed = name.unicodeScalars.allSatisfy {
      $0.properties.isAlphabetic || ("0"..."9").contains($0) || " -_.".unicodeScalars.contains($0)
    }
    return allowed ? nil : "only letters, digits, spaces and - _ ."
  }

  /// Compares without stopping at the first difference (a code or token is not guessed byte by byte).
  static func sameCode(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var difference = x.count ^ y.count
    for index in 0..<min(x.count, y.count) { difference |= Int(x[index] ^ y[index]) }
    return difference == 0
  }
}

extension StringProtocol {
  /// Without leading and trailing characters of `set` (no Foundation).
  func trimmingCharacters(inSet set: String) -> String {
    let drop = Set(set)
    guard let first = firstIndex(where: { !drop.contains($0) }),
      let last = lastIndex(where: { !drop.contains($0) })
    else { return "" }
    return String(self[first...last])
  }
}
