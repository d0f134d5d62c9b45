import OTADeltaPlan
import OTAWire

extension SenderEngine {
  /// Sends the next BLOCK HASHES requests (pipelined: the link writes each after the previous
  /// one's ATT response, the device answers in order), each answer due within the response
  /// timeout; when every page is in, plans with them and goes on as after Info.
  mutating func sendBlockHashRequests(_ out: inout [SenderAction]) {
    guard var current = paging, let info = infoAwaitingHashes else { return }
    if let hashes = current.complete {
      paging = nil
      infoAwaitingHashes = nil
      deadline = nil
      report.blockSize = hashes.blockSize
      report.blockHashesRead = hashes.hashes.count
      report.blockHashRequests += current.requestsSent
      chooseTransferMode(info, hashes: hashes)
      continueAfterInfo(&out)
      return
    }
    let requests = current.nextRequests()
    paging = current
    for request in requests { out.append(.writeControl(request.encoded)) }
    deadline = now + configuration.responseTimeout
  }

  /// A BLOCK HASHES answer: the next page, or (malformed, refused, unexpected) the end of paging.
  /// One that comes after paging gave up is skipped.
  mutating func handleBlockHashAnswer(_ bytes: [UInt8], _ out: inout [SenderAction]) {
    guard phase == .readingInfo, var current = paging else { return }
    do {
      try current.receive(try Response(bytes: bytes))
    } catch {
      paging = current
      pagingFailed(&out)
      return
    }
    paging = current
    sendBlockHashRequests(&out)
  }

  /// Paging failed (an error answer, a malformed page, no answer in time): plan without block
  /// hashes, never fail the push for it. Later answers to the abandoned requests are skipped.
  mutating func pagingFailed(_ out: inout [SenderAction]) {
    guard paging != nil else { return }
    abandonPaging()
    deadline = nil
    continueAfterInfo(&out)
  }

  /// Drops a paged read under way (a disconnect): the plan for this running image goes without
  /// block hashes, so the next connection does not read them again.
  mutating func abandonPaging() {
    guard let current = paging else { return }
    paging = nil
    report.blockHashRequests += current.requestsSent
    if let info = infoAwaitingHashes {
      infoAwaitingHashes = nil
      chooseTransferMode(info, hashes: nil)
    }
  }
}
