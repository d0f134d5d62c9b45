import OTADeltaPlan
import OTAWire

extension SenderEngine {
  /// Sends the next BLOCK HASHES requests (pipelined: the link writes each after the previous
  /// one's ATT response, the device answers in order), each answer due within the response
  /// timeout; when every page is in, plans with them and goes on as after Info.
  mutating func sendBlockHashRequests(_ out: inout [SenderAction]) {
    guard case .readingInfo(var read?) = state, var current = read.paging else { return }
    if let hashes = current.complete {
      state = .readingInfo(hashes: nil)
      deadline = nil
      report.blockSize = hashes.blockSize
      report.blockHashesRead = hashes.hashes.count
      report.blockHashRequests += current.requestsSent
      chooseTransferMode(read.info, hashes: hashes)
      continueAfterInfo(&out)
      return
    }
    let requests = current.nextRequests()
    read.paging = current
    state = .readingInfo(hashes: read)
    for request in requests { out.append(.writeControl(request.encoded)) }
    deadline = now + configuration.responseTimeout
  }

  /// A BLOCK HASHES answer: the next page, or (malformed, refused, unexpected) the end of paging.
  /// One that comes after paging gave up is skipped.
  mutating func handleBlockHashAnswer(_ bytes: [UInt8], _ out: inout [SenderAction]) {
    guard case .readingInfo(var read?) = state, var current = read.paging else { return }
    do {
      try current.receive(try Response(bytes: bytes))
    } catch {
      read.paging = current
      state = .readingInfo(hashes: read)
      pagingFailed(&out)
      return
    }
    read.paging = current
    state = .readingInfo(hashes: read)
    sendBlockHashRequests(&out)
  }

  /// Paging failed (an error answer, a malformed page, no answer in time): plan without block
  /// hashes, never fail the push for it. Later answers to the abandoned requests are skipped.
  mutating func pagingFailed(_ out: inout [SenderAction]) {
    guard case .readingInfo(let read?) = state, read.paging != nil else { return }
    abandonPaging()
    deadline = nil
    continueAfterInfo(&out)
  }

  /// Drops a paged read under way (a disconnect): the plan for this running image goes without
  /// block hashes, so the next connection does not read them again.
  mutating func abandonPaging() {
    guard case .readingInfo(let read?) = state, let current = read.paging else { return }
    state = .readingInfo(hashes: nil)
    report.blockHashRequests += current.requestsSent
    chooseTransferMode(read.info, hashes: nil)
  }
}
