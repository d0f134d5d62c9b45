/// How much expensive work (bytes of a slot read and hashed) each client may make the device do:
/// a token bucket per client and one for all of them together. A request is admitted while both
/// buckets are not in debt; what it cost is charged after (so one request may overdraw by its own
/// cost, never more). Past the budget the request is answered busy in its protocol's terms, and the
/// client's bucket refills at `rate`. Pure: time is given.
///
/// Per client, because one client's flood must not starve another; all together too, because a
/// UDP client can send from as many addresses as it likes.
public struct WorkBudget: Equatable, Sendable {
  struct Bucket: Equatable, Sendable {
    /// Bytes that may still be spent (negative: in debt).
    var balance: Double
    var updated: Duration
  }

  /// Bytes per second each bucket regains, and the most it holds.
  public let rate: Double
  public let burst: Double
  /// The shared bucket holds and regains this many times a client's.
  public let sharedFactor: Double
  /// The most clients kept apart; past it, the client quiet the longest is forgotten.
  public let maxClients: Int
  private var clients: [String: Bucket] = [:]
  private var shared: Bucket?

  /// By default 16 MiB a second and a burst of 64 MiB per client (a central pages the block hashes
  /// of a 64 MiB running image at once, then 16 MiB a second), four times that for all together.
  public init(
    rate: Double = 16 * 1_048_576, burst: Double = 64 * 1_048_576, sharedFactor: Double = 4,
    maxClients: Int = 64
  ) {
    self.rate = rate
    self.burst = burst
    self.sharedFactor = sharedFactor
    self.maxClients = maxClients
  }

  /// Whether `client` may start an expensive request at `now`.
  public func admits(_ client: String, now: Duration) -> Bool {
    let own = refilled(clients[client], now: now, rate: rate, burst: burst)
    let all = refilled(shared, now: now, rate: rate * sharedFactor, burst: burst * sharedFactor)
    return own.balance >= 0 && all.balance >= 0
  }

  /// `client`'s request cost `bytes` at `now`.
  public mutating func charge(_ client: String, bytes: UInt64, now: Duration) {
    guard bytes > 0 else { return }
    var own = refilled(clients[client], now: now, rate: rate, burst: burst)
    own.balance -= Double(bytes)
    if clients[client] == nil, clients.count >= maxClients,
      let quietest = clients.min(by: { $0.value.updated < $1.value.updated })?.key
    {
      clients[quietest] = nil
    }
    clients[client] = own
    var all = refilled(shared, now: now, rate: rate * sharedFactor, burst: burst * sharedFactor)
    all.balance -= Double(bytes)
    shared = all
  }

  /// How many clients are kept apart now.
  public var clientCount: Int { clients.count }

  private func refilled(_ bucket: Bucket?, now: Duration, rate: Double, burst: Double) -> Bucket {
    guard var bucket else { return Bucket(balance: burst, updated: now) }
    let elapsed = max(0, (now - bucket.updated) / .seconds(1))
    bucket.balance = min(burst, bucket.balance + elapsed * rate)
    bucket.updated = max(bucket.updated, now)
    return bucket
  }
}
