import CCurl

/// One HTTP request as the gateway makes it.
public struct HTTPRequest: Sendable {
  public var method: String
  public var url: String
  /// "Name: value" lines.
  public var headers: [String]
  public var body: [UInt8]?

  public init(method: String, url: String, headers: [String] = [], body: [UInt8]? = nil) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
  }
}

public struct HTTPResponse: Sendable {
  public var status: Int
  public var body: [UInt8]
}

/// Why a request got no HTTP answer: curl's own words (a refused connection, an unverifiable
/// certificate, a timeout), or an answer larger than the gateway takes.
public struct HTTPFailure: Error, Equatable, Sendable, CustomStringConvertible {
  public var url: String
  public var reason: String
  public var description: String { "\(url): \(reason)" }
}

/// What every request of the gateway shares.
public struct HTTPSettings: Sendable {
  /// A PEM file of the certificate authorities to trust instead of the system's (a private CA).
  public var caFile: String?
  public var connectTimeoutMilliseconds = 10_000
  /// A JSON request's whole time.
  public var requestTimeoutMilliseconds = 30_000
  /// A download is given up when it moves less than a byte a second for this long.
  public var stallSeconds = 30
  public var userAgent = "otactl-gateway"

  public init(caFile: String? = nil) { self.caFile = caFile }
}

/// HTTP over libcurl, one easy handle per request (so any thread may use it): TLS peers and host
/// names verified (against `caFile` when given), http and https only, answers bounded.
///
/// Why libcurl and not Foundation's URLSession: on Linux URLSession cannot be given a private CA
/// (it reads its CA-file variable on Android only) and cannot stream a body to a file with a Range
/// resume; AsyncHTTPClient does both but adds swift-nio's minutes to every clean build. libcurl is
/// what URLSession runs on anyway, from Debian's libcurl4-openssl-dev.
public struct CurlHTTPClient: Sendable {
  public let settings: HTTPSettings

  public init(settings: HTTPSettings) {
    _ = Self.globalInit
    self.settings = settings
  }

  private static let globalInit: Bool = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK }()

  /// A request whose whole answer is kept: at most `limit` bytes, or a failure.
  public func send(_ request: HTTPRequest, limit: Int = 1 << 20) throws(HTTPFailure) -> HTTPResponse {
    let sink = BodySink(limit: limit) { _ in true }
    let status = try perform(request, sink: sink, resumeFrom: 0, download: false)
    return HTTPResponse(status: status, body: sink.kept)
  }

  /// A GET whose body goes to `write` as it arrives (false from `write` stops it), from `offset`
  /// (a Range request); at most `limit` bytes. Returns the HTTP status: 206 when the server honoured
  /// the range, 200 when it sent the whole file.
  public func download(
    _ url: String, headers: [String], from offset: Int, limit: Int,
    write: @escaping (UnsafeRawBufferPointer) -> Bool
  ) throws(HTTPFailure) -> (status: Int, received: Int) {
    let sink = BodySink(limit: limit, keep: false, write: write)
    let status = try perform(
      HTTPRequest(method: "GET", url: url, headers: headers), sink: sink, resumeFrom: offset, download: true)
    return (status, sink.received)
  }

  /// The schemes a redirect from `url` may go to: an https request's redirect stays on https (a
  /// redirect to http would send the rest of the exchange, and the artifact, in the clear, where
  /// anyone on the path may change it); an http request's may go to either.
  public static func redirectProtocols(from url: String) -> String {
    url.lowercased().hasPrefix("https://") ? "https" : "http,https"
  }

  private func perform(_ request: HTTPRequest, sink: BodySink, resumeFrom: Int, download: Bool)
    throws(HTTPFailure)
    -> Int
  {
    guard let handle = curl_easy_init() else {
      throw HTTPFailure(url: request.url, reason: "curl_easy_init failed")
    }
    defer { curl_easy_cleanup(handle) }
    var list: UnsafeMutablePointer<curl_slist>?
    for header in request.headers { list = curl_slist_append(list, header) }
    if request.body != nil { list = curl_slist_append(list, "Content-Type: application/json") }
    list = curl_slist_append(list, "Accept: application/json, application/hal+json, */*")
    defer { curl_slist_free_all(list) }
    var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    let unmanaged = Unmanaged.passRetained(sink)
    defer { unmanaged.release() }
    let body = request.body ?? []
    let code: CURLcode = errorText.withUnsafeMutableBufferPointer { errorBuffer in
      body.withUnsafeBufferPointer { bodyBuffer in
        var ok = true
        func set(_ result: CURLcode) { ok = ok && result == CURLE_OK }
        set(blueota_curl_set_string(handle, CURLOPT_URL, request.url))
        set(blueota_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(
          blueota_curl_set_string(
            handle, CURLOPT_REDIR_PROTOCOLS_STR, Self.redirectProtocols(from: request.url)))
        set(blueota_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        set(blueota_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        set(blueota_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        if let caFile = settings.caFile { set(blueota_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
        set(blueota_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMilliseconds))
        if download {
          // A redirect (to object storage, say) is followed, never from https down to http
          // (`redirectProtocols`); curl sends no Authorization to another host.
          set(blueota_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 1))
          set(blueota_curl_set_long(handle, CURLOPT_MAXREDIRS, 5))
          set(blueota_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
          set(blueota_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, settings.stallSeconds))
          if resumeFrom > 0 {
            set(blueota_curl_set_offset(handle, CURLOPT_RESUME_FROM_LARGE, curl_off_t(resumeFrom)))
          }
        } else {
          set(blueota_curl_set_long(handle, CURLOPT_TIMEOUT_MS, settings.requestTimeoutMilliseconds))
        }
        set(blueota_curl_set_string(handle, CURLOPT_USERAGENT, settings.userAgent))
        set(blueota_curl_set_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)))
        set(
          blueota_curl_set_pointer(
            handle, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer.baseAddress)))
        set(blueota_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, bodyWritten))
        set(blueota_curl_set_pointer(handle, CURLOPT_WRITEDATA, unmanaged.toOpaque()))
        if request.method != "GET" {
          set(blueota_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method))
        }
        if request.body != nil {
          set(blueota_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyBuffer.count)))
          if let base = bodyBuffer.baseAddress, bodyBuffer.count > 0 {
            set(blueota_curl_set_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: base)))
          } else {
            set(blueota_curl_set_string(handle, CURLOPT_POSTFIELDS, ""))
          }
        }
        guard ok else { return CURLE_BAD_FUNCTION_ARGUMENT }
        return curl_easy_perform(handle)
      }
    }
    if sink.overLimit {
      throw HTTPFailure(url: request.url, reason: "the answer is longer than \(sink.limit) bytes")
    }
    guard code == CURLE_OK else {
      let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let summary = String(cString: curl_easy_strerror(code))
      throw HTTPFailure(url: request.url, reason: detail.isEmpty ? summary : "\(summary): \(detail)")
    }
    var status = 0
    _ = blueota_curl_response_code(handle, &status)
    return status
  }
}

/// Where a response's body goes: kept (a JSON answer) or handed on (a download), bounded.
final class BodySink {
  let limit: Int
  let keep: Bool
  let write: (UnsafeRawBufferPointer) -> Bool
  var kept: [UInt8] = []
  var received = 0
  var overLimit = false

  init(limit: Int, keep: Bool = true, write: @escaping (UnsafeRawBufferPointer) -> Bool) {
    self.limit = limit
    self.keep = keep
    self.write = write
  }

  func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard received + bytes.count <= limit else {
      overLimit = true
      return false
    }
    received += bytes.count
    if keep { kept.append(contentsOf: bytes) }
    return write(bytes)
  }
}

private func bodyWritten(
  _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
)
  -> Int
{
  guard let context else { return 0 }
  let sink = Unmanaged<BodySink>.fromOpaque(context).takeUnretainedValue()
  let length = size * count
  guard length > 0, let data else { return 0 }
  return sink.take(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}
