import OTABoot
import OTALab
import Testing

/// The boot pointer's x-ray under the real U-Boot: fw_printenv's listing (read by OTABoot's own
/// parser) and boot-once.py's boots.log made into the panel's rows and caption.
@Suite struct UBootXrayTests {
  /// `fw_printenv -c fw_env.config` as libubootenv prints it after v2's ACTIVATE (trimmed).
  static let afterActivate = """
    arch=arm
    BOOT_A_LEFT=3
    BOOT_B_LEFT=2
    BOOT_ORDER=B A
    bootargs=console=ttyAMA0 root=/dev/vda2 rootwait rauc.slot=A
    bootdelay=0
    boot_targets=virtio0

    """
  static let log = """
    boot 1 chose=A kernel=started seconds=3.10 save_ms=180
    boot 2 chose=A kernel=started seconds=2.05 save_ms=175

    """

  static func view(
    _ listing: String, log: String = log, poweredOn: UBootPowerOn? = nil, otad: LabSnapshot.Boot
  ) -> LabSnapshot.BootVariables {
    UBootXray.view(
      environment: .success(VariableListing.parse(listing)), boots: UBootBoot.parse(log),
      poweredOn: poweredOn,
      now: 1000, otad: otad, pointer: "primary A, trial B, booted A", config: "fw_env.config")
  }

  @Test func bootsLogLinesBecomeBootsAndSentences() {
    let boots = UBootBoot.parse(
      Self.log
        + "boot 3 chose=A kernel=hung seconds=4.50 save_ms=-\nboot 4 chose=- kernel=cut-writing seconds=1.2"
        + " save_ms=-\nboot 5 chose=B kernel=st")
    #expect(boots.map(\.number) == [1, 2, 3, 4, 5])
    #expect(boots[0] == UBootBoot(number: 1, chose: "A", kernel: "started", seconds: 3.1))
    #expect(boots[0].sentence == "boot 1: U-Boot chose A, its kernel started (3.10 s)")
    #expect(
      boots[2].sentence == "boot 3: U-Boot chose A, its kernel hung (the watchdog reset the board) (4.50 s)")
    #expect(boots[3].sentence == "boot 4: U-Boot chose no slot, power cut during saveenv (writing) (1.20 s)")
    #expect(UBootBoot(line: "boot 6 chose=B") == nil, "a line cut short is no boot")
    #expect(UBootBoot(line: "Booting slot B") == nil)
  }

  @Test func theVariablesBootCmdUsesAsFwPrintenvPrintsThem() {
    let view = Self.view(
      Self.afterActivate, otad: LabSnapshot.Boot(running: "A", confirmed: "A", trialSlot: "B"))
    #expect(
      view.variables == [
        ["BOOT_ORDER", "B A"], ["BOOT_A_LEFT", "3"], ["BOOT_B_LEFT", "2"],
        ["bootargs", "console=ttyAMA0 root=/dev/vda2 rootwait rauc.slot=A"],
      ])
    #expect(view.separator == "=" && view.backend == "U-Boot, as fw_printenv -c fw_env.config reads them")
    #expect(
      view.choices == [
        "boot 1: U-Boot chose A, its kernel started (3.10 s)",
        "boot 2: U-Boot chose A, its kernel started (2.05 s)",
      ])
    #expect(view.choosing == nil)
  }

  @Test func betweenActivateAndTheNextBootTheCaptionSaysTheyDisagree() {
    let view = Self.view(
      Self.afterActivate, otad: LabSnapshot.Boot(running: "A", confirmed: "A", trialSlot: "B"))
    let caption = view.caption ?? ""
    #expect(caption.hasPrefix("They disagree for a moment, and that is the lesson"))
    #expect(caption.contains("BOOT_ORDER=\"B A\", BOOT_B_LEFT=2") && caption.contains("the board runs A"))
  }

  @Test func afterUBootChoseTheTrialAndOtadConfirmedItTheyAgree() {
    let confirmed = Self.afterActivate.replacing("BOOT_ORDER=B A", with: "BOOT_ORDER=B")
    let view = Self.view(
      confirmed, log: Self.log + "boot 3 chose=B kernel=started seconds=2.20 save_ms=170\n",
      otad: LabSnapshot.Boot(running: "B", confirmed: "B"))
    #expect(
      view.caption
        == "They agree: BOOT_ORDER=\"B\" puts B first, U-Boot chose B at its last boot (3) and otad runs B, confirmed."
    )
    #expect(view.choices?.last == "boot 3: U-Boot chose B, its kernel started (2.20 s)")
  }

  @Test func whileTheBoardIsOnThePanelSaysTheBootloaderIsChoosing() {
    let on = UBootPowerOn(file: "boot=3 pid=4242 since=997.5\n")
    #expect(on == UBootPowerOn(boot: 3, pid: 4242, since: 997.5))
    #expect(UBootPowerOn(file: "boot=3 pid=") == nil)
    let view = Self.view(
      Self.afterActivate, poweredOn: on, otad: LabSnapshot.Boot(running: "A", trialSlot: "B"))
    #expect(
      view.choosing?.hasPrefix("the bootloader is choosing: the board is powered on (boot 3, 2.50 s so far)")
        == true)
    #expect(view.caption?.hasPrefix("The bootloader is choosing now") == true)
    #expect(
      view.caption?.contains("Until it has booted: They disagree for a moment, and that is the lesson")
        == true)
  }

  @Test func anUnreadableEnvironmentIsSaidAsFwPrintenvSaidIt() {
    let view = UBootXray.view(
      environment: .failure(UBootXray.EnvironmentUnreadable("Cannot read environment, using default")),
      boots: [], poweredOn: nil, now: 0, otad: LabSnapshot.Boot(), pointer: "nothing", config: "fw_env.config"
    )
    #expect(view.variables == [["fw_printenv", "cannot read it: Cannot read environment, using default"]])
    #expect(view.caption?.hasPrefix("fw_printenv cannot read U-Boot's environment") == true)
    #expect(view.choices == [])
  }

  @Test func aHungKernelIsNotCalledAgreement() {
    let view = Self.view(
      Self.afterActivate.replacing("BOOT_ORDER=B A", with: "BOOT_ORDER=A B"),
      log: "boot 7 chose=A kernel=hung seconds=5.00 save_ms=-\n",
      otad: LabSnapshot.Boot(running: "B", trialSlot: "A"))
    #expect(
      view.caption?.hasPrefix(
        "U-Boot's last boot did not start a kernel (boot 7: U-Boot chose A, its kernel hung") == true)
  }

  @Test func thePageDrawsTheBootloadersRowsAndSaysWhenItIsChoosing() {
    for id in [
      "boot-variables", "boot-choices", "boot-choosing", "boot-caption", "the bootloader is choosing",
    ] {
      #expect(LabPage.html.contains(id), "\(id)")
    }
  }
}

/// What the lab saw change on the board, kept between the page's looks.
@Suite struct UBootHistoryTests {
  static let boot1 = UBootBoot(number: 1, chose: "A", kernel: "started", seconds: 2.35)
  static let boot2 = UBootBoot(number: 2, chose: "B", kernel: "started", seconds: 0.3)

  static func counters(_ order: String, _ a: String, _ b: String) -> [String: String] {
    [
      "BOOT_ORDER": order, "BOOT_A_LEFT": a, "BOOT_B_LEFT": b, "bootargs": "console=ttyAMA0",
      "bootdelay": "0",
    ]
  }

  @Test func aPushUnderUBootReadsAsActivateTheChoiceAndTheConfirmation() {
    var history = UBootHistory()
    history.observe(at: 1, environment: Self.counters("A", "3", "0"), poweredOn: nil, lastBoot: Self.boot1)
    history.observe(at: 1.05, environment: nil, poweredOn: nil, lastBoot: Self.boot1)
    // ACTIVATE: otad's fw_setenv
    history.observe(
      at: 33.2, environment: Self.counters("B A", "3", "2"), poweredOn: nil, lastBoot: Self.boot1)
    let on = UBootPowerOn(boot: 2, pid: 7, since: 0)
    history.observe(at: 33.3, environment: nil, poweredOn: on, lastBoot: Self.boot1)
    // U-Boot's saveenv, the board still on: no verdict on who runs what
    history.observe(
      at: 33.5, environment: Self.counters("B A", "3", "1"), poweredOn: on, lastBoot: Self.boot1)
    history.observe(at: 33.6, environment: nil, poweredOn: nil, lastBoot: Self.boot2)
    history.observe(at: 34.1, environment: Self.counters("B", "0", "3"), poweredOn: nil, lastBoot: Self.boot2)
    #expect(
      history.lines == [
        "+1.00 s: BOOT_ORDER=A BOOT_A_LEFT=3 BOOT_B_LEFT=0",
        "+33.20 s: BOOT_ORDER=B A BOOT_A_LEFT=3 BOOT_B_LEFT=2 (puts B first while the board runs A: they disagree"
          + " until the next boot)",
        "+33.30 s: the board powered on (boot 2): the bootloader is choosing",
        "+33.50 s: BOOT_ORDER=B A BOOT_A_LEFT=3 BOOT_B_LEFT=1",
        "+33.60 s: boot 2: U-Boot chose B, its kernel started (0.30 s)",
        "+34.10 s: BOOT_ORDER=B BOOT_A_LEFT=0 BOOT_B_LEFT=3",
      ])
  }

  @Test func onlyTheLastLinesAreKeptAndAnUnchangedReadingAddsNone() {
    var history = UBootHistory()
    for index in 0..<20 {
      history.observe(
        at: Double(index), environment: Self.counters("A", "\(index)", "0"), poweredOn: nil, lastBoot: nil)
      history.observe(
        at: Double(index), environment: Self.counters("A", "\(index)", "0"), poweredOn: nil, lastBoot: nil)
    }
    #expect(history.lines.count == UBootHistory.limit)
    #expect(history.lines.last == "+19.00 s: BOOT_ORDER=A BOOT_A_LEFT=19 BOOT_B_LEFT=0")
  }
}
