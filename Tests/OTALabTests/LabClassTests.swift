import OTALab
import Testing

@Suite struct LabSessionTableTests {
  @Test func aStudentWithTheCodeAndAFreeNameGetsASeatTheirTokenFinds() throws {
    var table = LabSessionTable(code: "tulip42", capacity: 3)
    let seat = try table.join(code: "tulip42", name: "  Ann Lee ", token: "t1")
    #expect(seat == LabSessionTable.Seat(token: "t1", name: "Ann Lee"))
    #expect(table.seat(token: "t1")?.name == "Ann Lee")
    #expect(table.seat(token: "t2") == nil && table.seat(token: "") == nil && table.seat(token: nil) == nil)
    #expect(table.seat(token: "t") == nil, "a prefix of a token is no token")
  }

  @Test func aWrongCodeABadOrTakenNameAndAFullClassAreRefusedSayingWhy() throws {
    var table = LabSessionTable(code: "tulip42", capacity: 2)
    #expect(throws: LabSessionTable.Refusal.wrongCode) {
      try table.join(code: "tulip4", name: "x", token: "a")
    }
    #expect(throws: LabSessionTable.Refusal.wrongCode) { try table.join(code: "", name: "x", token: "a") }
    for name in ["", "   ", String(repeating: "a", count: 33), "<script>", "a;b"] {
      #expect(throws: LabSessionTable.Refusal.self) {
        try table.join(code: "tulip42", name: name, token: "a")
      }
    }
    _ = try table.join(code: "tulip42", name: "Ann", token: "a")
    #expect(throws: LabSessionTable.Refusal.nameTaken("ANN")) {
      try table.join(code: "tulip42", name: "ANN", token: "b")
    }
    _ = try table.join(code: "tulip42", name: "Bob", token: "b")
    let full = #expect(throws: LabSessionTable.Refusal.self) {
      try table.join(code: "tulip42", name: "Cyd", token: "c")
    }
    #expect(full == .full(seats: 2) && full?.description.contains("--seats") == true)
    #expect(LabSessionTable.Refusal.wrongCode.description.contains("class code"))
    #expect(table.seats.count == 2, "refusals take no seat")
    table.leave(token: "a")
    #expect(table.seat(token: "a") == nil && table.seats.count == 1)
  }
}

@Suite struct LabFormTests {
  @Test func aFormBodyAndACookieHeaderAreDecoded() {
    #expect(
      LabForm.fields("code=tulip42&name=Ann+L%C3%A9e%21&code=other") == [
        "code": "tulip42", "name": "Ann Lée!",
      ])
    #expect(LabForm.fields("name=%ZZ&code=x") == ["code": "x"], "a broken escape drops its field")
    #expect(LabForm.fields("") == [:])
    #expect(LabForm.cookie("blueota_lab", in: "a=1; blueota_lab=abc123; b=2") == "abc123")
    #expect(LabForm.cookie("blueota_lab", in: "xblueota_lab=abc") == nil)
    #expect(LabForm.cookie("blueota_lab", in: nil) == nil)
  }
}

@Suite struct LabClassGuardTests {
  let everywhere = LabRequestGuard.Hosts.listening(address: "0.0.0.0", port: 8080)

  @Test func classModeAnswersItsAddressesOnItsPortOnly() {
    for host in ["192.168.1.20:8080", "10.0.0.5:8080", "127.0.0.1:8080", "localhost:8080"] {
      #expect(
        LabRequestGuard.refusal(method: "GET", host: host, origin: nil, hosts: everywhere) == nil, "\(host)")
    }
    for host in [
      "192.168.1.20", "192.168.1.20:9090", "lab.example:8080", "192.168.1.256:8080", "192.168.01.2:8080",
      "1.2.3:8080", "1.2.3.4.5:8080",
    ] {
      #expect(
        LabRequestGuard.refusal(method: "GET", host: host, origin: nil, hosts: everywhere) != nil, "\(host)")
    }
    let one = LabRequestGuard.Hosts.listening(address: "192.168.1.20", port: 8080)
    #expect(LabRequestGuard.refusal(method: "GET", host: "192.168.1.20:8080", origin: nil, hosts: one) == nil)
    let other = LabRequestGuard.refusal(method: "GET", host: "192.168.1.21:8080", origin: nil, hosts: one)
    #expect(other?.contains("192.168.1.20:8080") == true)
  }

  @Test func aButtonFromAnotherOriginIsRefusedInClassModeToo() {
    #expect(
      LabRequestGuard.refusal(
        method: "POST", host: "192.168.1.20:8080", origin: "http://192.168.1.20:8080", hosts: everywhere)
        == nil)
    let elsewhere = LabRequestGuard.refusal(
      method: "POST", host: "192.168.1.20:8080", origin: "http://evil.example", hosts: everywhere)
    #expect(elsewhere?.contains("Origin http://evil.example") == true)
    #expect(
      LabRequestGuard.refusal(
        method: "POST", host: "192.168.1.20:8080", origin: "http://10.0.0.5:8080", hosts: everywhere) != nil)
  }

  @Test func aBodyLongerThanAButtonsIsRefusedBeforeItIsRead() {
    #expect(LabRequestGuard.bodyRefusal(contentLength: "40", transferEncoding: nil) == nil)
    #expect(LabRequestGuard.bodyRefusal(contentLength: nil, transferEncoding: nil) == nil)
    #expect(
      LabRequestGuard.bodyRefusal(contentLength: "4097", transferEncoding: nil)?.contains("4096") == true)
    #expect(LabRequestGuard.bodyRefusal(contentLength: "-1", transferEncoding: nil) != nil)
    #expect(LabRequestGuard.bodyRefusal(contentLength: nil, transferEncoding: "chunked") != nil)
  }

  @Test func listenTakesAnIPv4AddressAndAPort() throws {
    #expect(try LabListenAddress(parsing: "0.0.0.0:8080") == LabListenAddress(address: "0.0.0.0", port: 8080))
    #expect(try LabListenAddress(parsing: "127.0.0.1:0").isLoopback)
    for bad in ["0.0.0.0", "lab.example:80", "0.0.0.0:70000", ":80", "1.2.3.4:80:80", "::1:80"] {
      #expect(throws: LabListenError.self) { try LabListenAddress(parsing: bad) }
    }
  }

  @Test func theJoinPageEscapesWhatItSays() {
    let page = LabJoinPage.html(message: "the name \"<b>\" is taken")
    #expect(page.contains("&quot;&lt;b&gt;&quot;") && !page.contains("\"<b>\""))
    #expect(page.contains("action=\"/join\"") && !page.contains("http://"))
  }
}

@Suite struct LabClassAbuseTests {
  @Test func oneAddressHoldsAtMostItsSeatsSoOneStudentCannotFillTheClass() throws {
    var table = LabSessionTable(code: "tulip42", capacity: 10, perAddress: 2)
    _ = try table.join(code: "tulip42", name: "a1", token: "t1", address: "10.0.0.5")
    _ = try table.join(code: "tulip42", name: "a2", token: "t2", address: "10.0.0.5")
    let refused = #expect(throws: LabSessionTable.Refusal.self) {
      try table.join(code: "tulip42", name: "a3", token: "t3", address: "10.0.0.5")
    }
    #expect(refused == .tooManyFromAddress(seats: 2))
    #expect(refused?.description.contains("--seats-per-address") == true)
    _ = try table.join(code: "tulip42", name: "b1", token: "t4", address: "10.0.0.6")
    table.leave(token: "t1")
    _ = try table.join(code: "tulip42", name: "a3", token: "t5", address: "10.0.0.5")
    #expect(table.seats.map(\.name) == ["a2", "b1", "a3"])
  }

  @Test func wrongCodesFromOneAddressArePacedPerMinuteEvenTheRightOne() throws {
    var table = LabSessionTable(code: "tulip42", capacity: 10)
    for guess in 0..<LabSessionTable.wrongCodesPerMinute {
      #expect(throws: LabSessionTable.Refusal.wrongCode) {
        try table.join(code: "guess\(guess)", name: "x", token: "t", address: "10.0.0.9", now: 125)
      }
    }
    let paced = #expect(throws: LabSessionTable.Refusal.self) {
      try table.join(code: "tulip42", name: "x", token: "t", address: "10.0.0.9", now: 130)
    }
    #expect(paced == .tooManyWrongCodes(retryAfterSeconds: 50))
    _ = try table.join(code: "tulip42", name: "y", token: "u", address: "10.0.0.10", now: 130)
    _ = try table.join(code: "tulip42", name: "x", token: "t", address: "10.0.0.9", now: 180)
    #expect(table.seats.count == 2, "another address, and the next minute, join")
  }
}
