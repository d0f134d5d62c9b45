import Dispatch
import Logging
import OTAGateway
import OTAGatewayHTTP

/// Progress feedback sent off the push loop's thread, in order: a slow server delays its own
/// feedback, never a device's push. Closing feedback is sent with `close`, which waits.
final class GatewayFeedback: Sendable {
  private let queue = DispatchQueue(label: "otactl.gateway.feedback")
  private let client: DDIClient
  private let logger: Logger

  init(client: DDIClient, logger: Logger) {
    self.client = client
    self.logger = logger
  }

  /// Queues progress feedback.
  func progress(_ feedback: DDIFeedback, on link: DDILink, for controllerId: String) {
    queue.async { [client, logger] in
      do {
        try client.feedback(feedback, on: link, for: controllerId)
      } catch {
        logger.warning("\(controllerId): progress feedback not delivered: \(error)")
      }
    }
  }

  /// Queues closing feedback: the push loop goes on; `delivered` runs on the queue's thread with
  /// whether the server took it.
  func closeLater(
    _ feedback: DDIFeedback, on link: DDILink, for controllerId: String,
    delivered: @escaping @Sendable (Bool) -> Void
  ) {
    queue.async { [client, logger] in
      do {
        try client.feedback(feedback, on: link, for: controllerId)
        delivered(true)
      } catch {
        logger.error("\(controllerId): the result was not delivered (sent again next poll): \(error)")
        delivered(false)
      }
    }
  }

  /// Waits until every queued feedback is sent (or failed).
  func drain() { queue.sync {} }

  /// Sends closing feedback after every queued one; true when the server took it.
  func close(_ feedback: DDIFeedback, on link: DDILink, for controllerId: String) -> Bool {
    queue.sync {}
    do {
      try client.feedback(feedback, on: link, for: controllerId)
      return true
    } catch {
      logger.error("\(controllerId): the result was not delivered (sent again next poll): \(error)")
      return false
    }
  }
}
