import Testing

@testable import OTASocketLink

@Suite struct LinkConditionsTests {
  @Test func parsesEveryKey() throws {
    let conditions = try LinkConditions(
      spec: "mtu=185, interval=30ms,packets=4,phy=1M,dle=off,queue=8,loss=0.02,dup=0.01,reorder=0.1,"
        + "flip=0.001,drop=0.005,disconnect-after=40000,seed=7")
    #expect(conditions.mtu == 185)
    #expect(conditions.connectionInterval == .milliseconds(30))
    #expect(conditions.packetsPerEvent == 4)
    #expect(conditions.phy == .le1M)
    #expect(conditions.dataLength == 27)
    #expect(conditions.queueDepth == 8)
    #expect(conditions.loss == 0.02 && conditions.duplication == 0.01 && conditions.reordering == 0.1)
    #expect(conditions.bitFlips == 0.001 && conditions.disconnects == 0.005)
    #expect(conditions.disconnectAfterBytes == 40000 && conditions.seed == 7)
  }

  @Test func parsesTheAirKeys() throws {
    let conditions = try LinkConditions(
      spec: "interval=15ms,event=5ms,phy=coded-s2,datalength=100,encrypt=on")
    #expect(conditions.eventLength == .milliseconds(5))
    #expect(conditions.phy == .codedS2)
    #expect(conditions.dataLength == 100)
    #expect(conditions.encrypted)
    var parsed = try LinkConditions(spec: conditions.description)
    parsed.seed = conditions.seed
    #expect(parsed == conditions, "\(conditions)")
  }

  @Test func keepsTheBaseForKeysNotGiven() throws {
    let base = LinkConditions(mtu: 100, loss: 0.5)
    let conditions = try LinkConditions(spec: "interval=7.5ms", base: base)
    #expect(conditions.mtu == 100 && conditions.loss == 0.5)
    #expect(conditions.connectionInterval == .microseconds(7500))
    #expect(try LinkConditions(spec: "") == LinkConditions())
  }

  @Test func descriptionParsesBackToTheSameConditions() throws {
    let conditions = LinkConditions(
      mtu: 23, connectionInterval: .microseconds(7500), packetsPerEvent: 3, phy: .coded, dataLength: 27,
      queueDepth: 4, loss: 0.25, reordering: 0.5, disconnectAfterBytes: 99)
    var parsed = try LinkConditions(spec: conditions.description)
    parsed.seed = conditions.seed
    #expect(parsed == conditions)
  }

  @Test(arguments: [
    ("mtu=22", "mtu=22"), ("mtu=518", "23...517"), ("loss=1.5", "probability"), ("interval=5s", "outside"),
    ("interval=fast", "duration"), ("phy=3M", "1M, 2M, coded or coded-s2"), ("datalength=300", "27...251"),
    ("encrypt=maybe", "on or off"), ("color=red", "unknown key 'color'"),
    ("mtu", "not key=value"), ("dle=maybe", "on or off"), ("seed=-1", "whole number"),
  ])
  func refusesBadValuesWithAReadableReason(_ spec: String, _ hint: String) {
    do {
      _ = try LinkConditions(spec: spec)
      Issue.record("\(spec) parsed")
    } catch {
      #expect(error.description.contains(hint), "\(spec): \(error)")
    }
  }
}
