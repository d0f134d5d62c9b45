import Dispatch
import OTAGateway
import OTAGatewayHTTP
import Synchronization

/// One target's exchange with the server in a cycle, HTTP only: its poll, its attributes when the
/// server asks for them or they changed (and the poll again that follows them), and its deployment
/// when it has one and no cancel. Several targets' at once (`run`), each on its own connection.
struct GatewayRegistration: Sendable {
  var poll: Result<DDIControllerBase, DDIError>
  /// Whether the attributes went through; nil when they were not sent.
  var attributes: Result<Void, DDIError>?
  /// The deployment read; nil when there was none to read.
  var deployment: Result<DDIDeploymentBase?, DDIError>?

  /// How many targets' requests go at once.
  static let width = 8

  /// `attributes`: what the server is told of the target; `report`: they changed since last told.
  static func register(_ id: String, attributes told: [String: String], report: Bool, ddi: DDIClient)
    -> GatewayRegistration
  {
    var base: DDIControllerBase
    do {
      base = try ddi.poll(id)
    } catch {
      return GatewayRegistration(poll: .failure(error))
    }
    var attributes: Result<Void, DDIError>?
    if base.configData != nil || report {
      do {
        try ddi.configData(told, for: id)
        attributes = .success(())
      } catch {
        attributes = .failure(error)
      }
      // The server asked for the attributes to take the target on: what it wants of the target
      // now is worth asking at once, rather than after the short sleep it gave for that.
      if base.configData != nil, let again = try? ddi.poll(id) { base = again }
    }
    var deployment: Result<DDIDeploymentBase?, DDIError>?
    if base.cancelAction == nil, let link = base.deploymentBase {
      do {
        deployment = .success(try ddi.deployment(link, for: id))
      } catch {
        deployment = .failure(error)
      }
    }
    return GatewayRegistration(poll: .success(base), attributes: attributes, deployment: deployment)
  }

  /// `register` for each target, `width` at a time; the results in the order given.
  static func run(_ targets: [(id: String, attributes: [String: String], report: Bool)], ddi: DDIClient)
    -> [GatewayRegistration]
  {
    let results = Mutex([GatewayRegistration?](repeating: nil, count: targets.count))
    let next = Atomic(0)
    let group = DispatchGroup()
    for _ in 0..<min(width, targets.count) {
      DispatchQueue.global().async(group: group) {
        while true {
          let index = next.add(1, ordering: .relaxed).oldValue
          guard index < targets.count else { return }
          let target = targets[index]
          let done = register(target.id, attributes: target.attributes, report: target.report, ddi: ddi)
          results.withLock { $0[index] = done }
        }
      }
    }
    group.wait()
    return results.withLock {
      $0.map {
        $0 ?? GatewayRegistration(poll: .failure(.garbage(url: "", what: "no registration", body: "")))
      }
    }
  }
}
