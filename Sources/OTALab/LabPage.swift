/// The lab's one page: HTML, CSS and script in one document, nothing fetched from elsewhere (it
/// works with no network). The script asks `/state` a few times a second and draws it; the buttons
/// post to `/action/NAME`.
public enum LabPage {
  public static let html = """
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><title>BlueOTA lab</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <style>
    body{font:14px/1.35 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
    header{background:#1d2330;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:baseline}
    header h1{font-size:18px;margin:0} header span{opacity:.8}
    main{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px;padding:12px}
    section{background:#fff;border-radius:6px;padding:10px 12px;box-shadow:0 1px 2px #0002}
    h2{font-size:15px;margin:0 0 8px}
    .slots{display:flex;gap:10px}
    .slot{flex:1;border:2px solid #c7cbd3;border-radius:6px;padding:8px}
    .slot.running{border-color:#2b7a3d} .slot.trial{border-color:#d48a00;border-style:dashed}
    .badge{display:inline-block;font-size:11px;border-radius:3px;padding:1px 5px;margin:2px 2px 0 0;background:#e3e6eb}
    .badge.run{background:#2b7a3d;color:#fff} .badge.conf{background:#2456a6;color:#fff}
    .badge.trial{background:#d48a00;color:#fff} .badge.bad{background:#b3261e;color:#fff}
    .cells{display:grid;grid-template-columns:repeat(32,1fr);gap:1px;margin-top:6px}
    .cells i{display:block;height:12px;background:#e3e6eb}
    .cells i.c{background:#2b7a3d} .cells i.w{background:#f0c420} .cells i.x{background:#b3261e} .cells i.r{background:#6aa84f;outline:2px solid #b3261e;outline-offset:-2px}
    .legend i{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;vertical-align:-1px}
    table{border-collapse:collapse;width:100%} td{padding:2px 4px;vertical-align:top} td:first-child{color:#5b6475;width:40%}
    .timeline{position:relative;height:34px;background:#eef0f3;border-radius:4px;overflow:hidden}
    .timeline div{position:absolute;top:0;bottom:0;border-right:1px solid #fff;font-size:11px;color:#fff;overflow:hidden;white-space:nowrap;padding:2px}
    .buttons{display:flex;flex-wrap:wrap;gap:6px}
    button{font:inherit;padding:6px 10px;border-radius:4px;border:1px solid #8a93a6;background:#fff;cursor:pointer}
    button:hover{background:#eef0f3}
    ol{margin:0;padding-left:4.5ch;max-height:260px;overflow:auto;font:12px/1.3 ui-monospace,monospace}
    .timeline .resume{position:absolute;top:0;bottom:0;width:3px;background:#b3261e;border:0;padding:0}
    .cycle svg{width:100%;height:auto;max-height:170px}
    .cycle rect{fill:#eef0f3;stroke:#c7cbd3;stroke-width:2} .cycle text{font:13px system-ui,sans-serif;fill:#5b6475;text-anchor:middle}
    .cycle .lit rect{fill:#f0c420;stroke:#8a5a00} .cycle .lit text{fill:#1d2330;font-weight:700}
    .cycle .lit.good rect{fill:#2b7a3d} .cycle .lit.good text{fill:#fff} .cycle .lit.bad rect{fill:#b3261e} .cycle .lit.bad text{fill:#fff}
    .cycle path{stroke:#8a93a6;stroke-width:2;fill:none;marker-end:url(#arrow)}
    .phases{display:flex;gap:4px;margin-top:8px} .phases div{flex:1;border-radius:4px;padding:4px;background:#eef0f3;font-size:12px;text-align:center}
    .phases .now{background:#2456a6;color:#fff} .phases .past{background:#cfe3d3} .phases .fail{background:#b3261e;color:#fff} .phases .held{background:#f0c420}
    #exercises{max-height:none;font:13px/1.35 system-ui,sans-serif;padding-left:3.2ch} #exercises li{margin:4px 0;padding:3px 6px;border-radius:4px}
    #exercises li[data-state=locked]{color:#7a8599} #exercises li[data-state=done]{color:#2b7a3d}
    #exercises li.current{background:#fff6d6;outline:2px solid #f0c420}
    #exercises small{display:block;color:#5b6475}
    .choosing{display:inline-block;background:#fff6d6;outline:2px solid #f0c420;border-radius:3px;padding:1px 4px}
    #say-line{margin-bottom:4px} #say-line.held{background:#fff6d6;outline:2px solid #f0c420;border-radius:4px;padding:3px 6px}
    #say-section .buttons{margin-top:8px}
    .ok{color:#2b7a3d;font-weight:600} span.held{color:#8a5a00;font-weight:600} .fail{color:#b3261e;font-weight:600}
    canvas{width:100%;height:120px;background:#fafbfc;border:1px solid #e3e6eb}
    </style></head><body>
    <header><h1>BlueOTA lab</h1><span id="seat"></span><span id="summary">connecting to the lab…</span></header>
    <main>
    <section><h2>Exercises (in order)</h2><ol id="exercises"></ol></section>
    <section class="cycle"><h2>The A/B cycle of slot <span id="cycle-slot">?</span></h2>
      <svg viewBox="0 0 640 160" role="img" aria-label="slot states: empty, receiving, validated, on trial, good or bad (rolled back)">
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#8a93a6" stroke="none"/></marker></defs>
      <path d="M100,40H128"/><path d="M228,40H256"/><path d="M356,40H384"/><path d="M484,30C500,20 505,20 520,25"/><path d="M484,50C500,95 505,110 520,115"/>
      <path d="M570,135C560,158 60,158 50,62"/>
      <g id="stage-empty"><rect x="4" y="20" width="96" height="40" rx="6"/><text x="52" y="45">empty</text></g>
      <g id="stage-receiving"><rect x="132" y="20" width="96" height="40" rx="6"/><text x="180" y="45">receiving</text></g>
      <g id="stage-validated"><rect x="260" y="20" width="96" height="40" rx="6"/><text x="308" y="45">validated</text></g>
      <g id="stage-on-trial"><rect x="388" y="20" width="96" height="40" rx="6"/><text x="436" y="45">on trial</text></g>
      <g id="stage-good" class="good"><rect x="524" y="4" width="112" height="40" rx="6"/><text x="580" y="29">good</text></g>
      <g id="stage-bad" class="bad"><rect x="524" y="92" width="112" height="48" rx="6"/><text x="580" y="112">bad</text><text x="580" y="130">(rolled back)</text></g>
      <text x="300" y="100">the next update writes the slot that does not run</text>
      </svg>
      <div id="cycle-slots"></div>
      <div class="phases" id="phases"><div id="phase-prepare">PREPARE</div><div id="phase-transfer">transfer</div><div id="phase-validate">VALIDATE</div><div id="phase-activate">ACTIVATE</div><div id="phase-restart">restart, verify</div></div>
    </section>
    <section id="slots-section"><h2>Slots</h2><div class="slots" id="slots"></div>
      <div id="transfer"></div>
      <div class="cells" id="cells"></div>
      <div id="encryption"></div>
      <div class="legend"><i style="background:#2b7a3d"></i>committed (checked)<i style="background:#f0c420"></i>in flight<i style="background:#b3261e"></i>failed check<i style="background:#6aa84f;outline:2px solid #b3261e"></i>resent<i style="background:#e3e6eb"></i>empty</div>
    </section>
    <section><h2>Boot state</h2><table id="boot"></table></section>
    <section id="say-section"><h2>The device has a say</h2><div id="say-line"></div><table id="say"></table>
      <div class="buttons">
      <button id="hold-lock" data-action="hold-lock">Hold an update lock</button>
      <button id="release-lock" data-action="release-lock">Release the lock</button>
      <button id="require-consent" data-action="require-consent">Require consent</button>
      <button id="consent-accept" data-action="consent-accept">Consent: accept</button>
      <button id="consent-postpone" data-action="consent-postpone">Consent: postpone 1 min</button>
      <button id="consent-decline" data-action="consent-decline">Consent: decline</button>
      </div></section>
    <section><h2>Push</h2><div id="push-line"></div><div class="timeline" id="timeline"></div><table id="push"></table></section>
    <section><h2>Link and throughput</h2><table id="link"></table><canvas id="chart" width="600" height="160"></canvas></section>
    <section><h2>Try it</h2><div class="buttons">
      <button id="push-v2" data-action="push-v2">Push v2 (good, whole)</button>
      <button id="push-v3" data-action="push-v3">Push v3 (fails its self-test, whole)</button>
      <button id="push-unsigned" data-action="push-unsigned">Push an unsigned image</button>
      <button id="push-encrypted" data-action="push-encrypted">Push v2.1 encrypted</button>
      <button id="drop-link" data-action="drop-link">Drop the link</button>
      <button id="power-cut" data-action="power-cut">Power cut</button>
      <button id="flip-byte" data-action="flip-byte">Flip a byte in the inactive slot</button>
      <label>loss <select id="loss"><option>0</option><option>0.02</option><option>0.1</option><option>0.3</option></select></label>
      <button id="set-loss" data-action="set-loss">Change the loss</button>
      <label>fault <input id="fault" list="fault-lines" size="36" value="refuse at=validate status=validation-failed"></label>
      <datalist id="fault-lines"><option>drop-link after=37%</option><option>refuse at=activate status=busy</option><option>delay by=2s at=window</option><option>corrupt-chunk after=50%</option><option>fail-health-check</option><option>storage-full after=60% times=always</option><option>power-cut after=40%</option></datalist>
      <button id="set-fault" data-action="set-fault">Set the fault</button>
      <button id="clear-faults" data-action="clear-faults">Clear the faults</button>
      <button id="push-delta" data-action="push-delta">Push v2 as a delta (--base v1)</button>
      <button id="reset" data-action="reset">Reset the device</button>
    </div><ol id="actions"></ol></section>
    <section><h2>What otad did (newest first)</h2><ol id="events" reversed></ol></section>
    </main>
    <script>
    const $ = id => document.getElementById(id);
    const esc = s => String(s ?? '').replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
    const rows = pairs => pairs.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('');
    const kib = n => n >= 1048576 ? (n / 1048576).toFixed(2) + ' MiB' : (n / 1024).toFixed(1) + ' KiB';
    const colors = {connecting:'#7a8599',readingInfo:'#7a8599',checkingStatus:'#7a8599',preparing:'#6a4fb3',transferring:'#2456a6',validating:'#138a8a',activating:'#d48a00',restarting:'#8a5a00',verifying:'#2b7a3d',awaitingConfirmation:'#2b7a3d',confirming:'#2b7a3d'};
    let last = null;
    document.querySelectorAll('button[data-action]').forEach(b => b.addEventListener('click', async () => {
      const body = b.dataset.action === 'set-loss' ? $('loss').value : b.dataset.action === 'set-fault' ? $('fault').value : '';
      const r = await fetch('/action/' + b.dataset.action, {method: 'POST', body});
      const text = await r.text();
      if (!r.ok) alert(text);
      poll();
    }));
    function drawSlots(s) {
      const st = s.status;
      $('slots').innerHTML = (st ? st.slots : []).map(sl => {
        const trial = s.boot.trialSlot === sl.slot;
        const badges = [sl.running ? '<span class="badge run">running</span>' : '',
          sl.confirmed ? '<span class="badge conf">confirmed</span>' : '',
          trial ? '<span class="badge trial">on trial</span>' : '',
          sl.status === 'bad' ? '<span class="badge bad">bad</span>' : '',
          s.slot && s.slot.slot === sl.slot ? '<span class="badge">being written</span>' : ''].join('');
        return `<div class="slot ${sl.running ? 'running' : ''} ${trial ? 'trial' : ''}" id="slot-${sl.slot}" data-version="${esc(sl.version)}" data-status="${esc(sl.status)}">
          <b>Slot ${sl.slot}</b> ${badges}<br>firmware <b>${esc(sl.version ?? 'none')}</b> · ${esc(sl.status)}</div>`;
      }).join('');
      const p = s.slot;
      if (p) {
        $('transfer').innerHTML = `Slot ${p.slot}: <b id="committed" data-committed="${p.committed}" data-size="${p.size}">${kib(p.committed)}</b> of ${kib(p.size)} committed · <span id="windows" data-checked="${p.windowsChecked}" data-failed="${p.windowsFailed}">${p.windowsChecked} windows checked, ${p.windowsFailed} failed</span>`;
        $('cells').innerHTML = [...p.cells].map(c => `<i class="${c === '.' ? '' : c}"></i>`).join('');
        $('cells').dataset.cells = p.cells;
      } else {
        $('transfer').textContent = 'no transfer in the journal';
        $('cells').innerHTML = '';
        $('cells').dataset.cells = '';
      }
    }
    function drawBoot(s) {
      const b = s.boot;
      const outcome = b.outcome === 'rolled back' ? `<span class="fail" id="outcome">rolled back</span>` :
        b.outcome === 'succeeded' ? `<span class="ok" id="outcome">succeeded</span>` : `<span id="outcome">${esc(b.outcome ?? '—')}</span>`;
      $('boot').innerHTML = rows([
        ['device', s.otadRunning ? '<span class="ok">otad running</span>' : '<span class="fail">off (power cut)</span>'],
        ['running slot', esc(b.running ?? '—')], ['confirmed slot', esc(b.confirmed ?? '—')],
        ['trial', b.trialSlot ? `slot ${esc(b.trialSlot)}, ${b.bootsLeft} of ${b.bootsAllowed} boots left` : 'none'],
        ['last boot decision', `<span id="decision">${esc(b.lastDecision ?? '—')}</span>${b.lastDecisionSlot ? ' → slot ' + esc(b.lastDecisionSlot) : ''}`],
        ['last outcome', outcome + (b.outcomeTo && b.outcome !== 'none' ? ` ${esc(b.outcomeFrom)} → ${esc(b.outcomeTo)}` : '')],
        ['reason', `<span id="reason">${esc(b.outcomeReason ?? '')}</span>`],
        ['restarts and power cuts', String(s.powerCuts)]]) + (s.bootVariables ? bootloaderRows(s.bootVariables) : '');
    }
    function bootloaderRows(v) {
      const sep = v.separator === '=' ? '=' : ' → ';
      const out = [[`bootloader's own variables (${esc(v.backend)})`, `<span id="boot-variables">${v.variables.map(x => `<code>${esc(x[0])}${sep}${esc(x[1])}</code>`).join('<br>')}</span>`],
        ['the pointer they make', `<span id="boot-pointer">${esc(v.pointer)}</span>`]];
      if (v.choices) out.push(["the bootloader's last choices", `<span id="boot-choices">${v.choices.length ? v.choices.map(esc).join('<br>') : 'none yet'}</span>`]);
      if (v.choosing) out.push(['now', `<span id="boot-choosing" class="choosing">${esc(v.choosing)}</span>`]);
      if (v.history) out.push(['what the lab saw change', `<span id="boot-history">${v.history.length ? v.history.map(esc).join('<br>') : '—'}</span>`]);
      if (v.caption) out.push(["otad's view against the bootloader's", `<span id="boot-caption">${esc(v.caption)}</span>`]);
      return rows(out);
    }
    function drawSay(s) {
      const y = s.say;
      $('require-consent').textContent = y && y.consentRequired ? 'Stop requiring consent' : 'Require consent';
      if (!y) { $('say-line').textContent = ''; $('say-line').className = ''; $('say').innerHTML = ''; return; }
      const k = y.kept, held = k && k.hold !== 'none';
      $('say-line').className = held ? 'held' : '';
      $('say-line').innerHTML = k ? (held ? `<b>${esc(k.version)} is validated, not activated</b>: held by ${esc(k.hold)}. The device keeps the activation and carries it out itself once nothing holds it.`
        : `<b>${esc(k.version)}</b>: nothing holds it; the device activates it within a second.`) : 'no activation kept: an ACTIVATE goes ahead unless something holds it';
      $('say').innerHTML = rows([
        ["owner's consent", `<span id="say-consent" data-required="${y.consentRequired ? 1 : ''}">${y.consentRequired ? 'required (otad run --require-consent)' : 'not required'}</span>`],
        ['update locks', `<span id="say-locks" data-holding="${y.locks.filter(l => l.state === 'holding').length}">${y.locks.length ? y.locks.map(l => `${esc(l.holder)}: ${esc(l.state)}${l.reason ? ' — ' + esc(l.reason) : ''}`).join('<br>') : 'none'}</span>`],
        ['kept activation', k ? `<span id="say-kept" data-hold="${esc(k.hold)}" data-version="${esc(k.version)}">${esc(k.version)} as a ${esc(k.kind)}${k.security ? ' (a security update)' : ''}; held by <b>${esc(k.hold)}</b>: ${esc(k.detail)}</span>` : '<span id="say-kept" data-hold="">none</span>'],
        ['its window', k && k.window ? esc(k.window) : 'none: at once'],
        ["the owner's answer", y.answer ? `<span id="say-answer" data-decision="${esc(y.answer.decision)}">${esc(y.answer.decision)} about ${esc(y.answer.version)}${y.answer.until ? ' until ' + esc(y.answer.until) : ''}</span>` : '<span id="say-answer" data-decision="">none</span>']]);
    }
    function drawPush(s) {
      const p = s.push;
      if (!p) { $('push-line').textContent = 'no push yet: press a push button'; $('timeline').innerHTML = ''; $('push').innerHTML = ''; return; }
      // otactl's exit 16: validated and kept, not activated yet (docs/OTACTL.md): no failure.
      const res = p.result ? (p.result.ok ? '<span class="ok" id="result">succeeded</span>' :
        p.result.exitCode === 16 ? '<span class="held" id="result">deferred (exit 16): the device keeps the activation</span>' :
        `<span class="fail" id="result">failed (exit ${p.result.exitCode})</span>`) : `<span id="result">${esc(p.phase)}…</span>`;
      $('push-line').innerHTML = `<b>${esc(p.label)}</b>: ${esc(p.image.split('/').pop())} ${esc(p.version)} · ${res}`;
      const span = Math.max(p.elapsed, 0.001);
      $('timeline').innerHTML = p.phases.map(ph => {
        const end = ph.end ?? p.elapsed;
        return `<div title="${esc(ph.name)}" data-phase="${esc(ph.name)}" style="left:${100 * ph.start / span}%;width:${Math.max(0.3, 100 * (end - ph.start) / span)}%;background:${colors[ph.name] || '#555'}">${esc(ph.name)}</div>`;
      }).join('') + p.resumes.map((off, i) => {
        const at = (p.resumeTimes || [])[i] ?? p.elapsed;
        return `<div class="resume" data-resume="${off}" title="resumed from ${kib(off)}" style="left:${Math.min(99.5, 100 * at / span)}%"></div>`;
      }).join('');
      const air = p.transferMode ? ` · ${esc(p.transferMode)}${p.plainBytesOnAir ? ' (plain chunks: ' + kib(p.plainBytesOnAir) + ')' : ''}` : '';
      $('push').innerHTML = rows([
        ['phase', esc(p.phase)], ['committed', `${kib(p.committed)} of ${kib(p.total || p.size)}`],
        ['bytes on air', `<span id="air" data-bytes="${p.bytesOnAir}" data-size="${p.size}" data-mode="${esc(p.transferMode || '')}">${kib(p.bytesOnAir)} of a ${kib(p.size)} image${air}</span>`], ['elapsed', p.elapsed.toFixed(2) + ' s'],
        ['resumed from', `<span id="resumes" data-count="${p.resumes.length}">${p.resumes.length ? p.resumes.map(kib).join(', ') : '—'}</span>`],
        ['error', `<span id="push-error">${esc(p.result && p.result.error || '')}</span>`]]);
    }
    function drawLink(s) {
      const l = s.link, p = s.push;
      let rate = 0;
      if (p && p.samples.length > 1) {
        const a = p.samples[Math.max(0, p.samples.length - 6)], b = p.samples[p.samples.length - 1];
        if (b[0] > a[0]) rate = (b[1] - a[1]) / (b[0] - a[0]);
      }
      $('link').innerHTML = rows([['ATT MTU', l.mtu], ['connection interval', l.intervalMilliseconds + ' ms'],
        ['loss', `<span id="loss-now">${(l.loss * 100).toFixed(0)}%</span>`], ['throughput', `<span id="rate">${kib(rate)}/s</span>`],
        ['--link', `<code>${esc(l.conditions)}</code>`]]);
      const c = $('chart'), g = c.getContext('2d');
      g.clearRect(0, 0, c.width, c.height);
      if (!p || p.samples.length < 2) return;
      const pts = [];
      for (let i = 1; i < p.samples.length; i++) {
        const a = p.samples[i - 1], b = p.samples[i];
        if (b[0] > a[0]) pts.push([b[0], Math.max(0, (b[1] - a[1]) / (b[0] - a[0]))]);
      }
      const maxT = Math.max(...pts.map(q => q[0]), 0.001), maxR = Math.max(...pts.map(q => q[1]), 1);
      g.strokeStyle = '#2456a6'; g.lineWidth = 2; g.beginPath();
      pts.forEach((q, i) => { const x = q[0] / maxT * (c.width - 10) + 5, y = c.height - 5 - q[1] / maxR * (c.height - 25);
        i ? g.lineTo(x, y) : g.moveTo(x, y); });
      g.stroke(); g.fillStyle = '#5b6475'; g.font = '12px sans-serif'; g.fillText('peak ' + kib(maxR) + '/s', 8, 14);
    }
    const five = {preparing:'prepare',transferring:'transfer',validating:'validate',activating:'activate',restarting:'restart',verifying:'restart',awaitingConfirmation:'restart',confirming:'restart'};
    const order = ['prepare','transfer','validate','activate','restart'];
    function drawCycle(s) {
      const c = s.cycle;
      const ids = {'empty':'empty','receiving':'receiving','validated':'validated','on trial':'on-trial','good':'good','bad (rolled back)':'bad'};
      Object.entries(ids).forEach(([st, id]) => {
        const g = $('stage-' + id), lit = !!c && c.stage === st;
        g.classList.toggle('lit', lit); g.dataset.lit = lit ? '1' : '';
      });
      $('cycle-slot').textContent = c ? c.slot : '?';
      $('cycle-slots').innerHTML = c ? Object.keys(c.slots).sort().map(k => `slot ${esc(k)}: <b>${esc(c.slots[k])}</b>`).join(' · ') : '';
      const p = s.push;
      const names = p ? p.phases.map(x => five[x.name]).filter(Boolean) : [];
      const now = p && !p.result ? five[p.phase] : null;
      order.forEach(k => {
        const e = $('phase-' + k), seen = names.includes(k);
        const failed = p && p.result && !p.result.ok && names[names.length - 1] === k;
        // A held ACTIVATE did not fail: the device keeps it (the device's say).
        const held = failed && k === 'activate' && s.say && s.say.kept && s.say.kept.hold !== 'none';
        e.className = held ? 'held' : failed ? 'fail' : k === now ? 'now' : seen ? 'past' : '';
        let text = {prepare:'PREPARE',transfer:'transfer',validate:'VALIDATE',activate:held ? 'ACTIVATE kept, held' : 'ACTIVATE',restart:'restart, verify'}[k];
        if (k === 'transfer' && p && p.total) text += ` ${kib(p.committed)} of ${kib(p.total)}` + (p.resumes.length ? ` · resumed from ${p.resumes.map(kib).join(', ')}` : '');
        e.textContent = text;
      });
    }
    function drawExercises(s) {
      const current = (s.exercises || []).find(x => x.state === 'ready');
      $('exercises').innerHTML = (s.exercises || []).map(x => `<li id="exercise-${x.number}" value="${x.number}" data-state="${x.state}" class="${current && current.number === x.number ? 'current' : ''}"><b>${esc(x.title)}</b> — ${x.state === 'done' ? 'done ✓' : x.state === 'ready' ? 'ready' : 'locked'}<small>needs: ${esc(x.needs)}${x.first ? ' · first: ' + esc(x.first) : ''}</small></li>`).join('');
    }
    function draw(s) {
      last = s; window.labState = s;
      $('seat').textContent = s.seat ? 'student: ' + s.seat : '';
      document.body.dataset.at = s.at;
      const choosing = (s.resetting ? s.resetting + ' · ' : '') + (s.bootVariables && s.bootVariables.choosing ? 'the bootloader is choosing… · ' : '');
      $('summary').textContent = choosing + (s.status ? `running ${s.status.running} · firmware ${(s.status.slots.find(x => x.running) || {}).version} · ${s.push ? s.push.label + ': ' + s.push.phase : 'idle'}` : (s.statusError || 'reading the device…'));
      drawSlots(s); drawBoot(s); drawSay(s); drawPush(s); drawLink(s); drawCycle(s); drawExercises(s);
      const x = s.encryption;
      $('encryption').innerHTML = x ? `encrypted v2.1, its first payload bytes: on the air <code id="on-air">${esc(x.onAir)}</code> (ciphertext), in slot ${esc(x.slot)} <code id="in-slot">${esc(x.inSlot)}</code> <code>${esc(x.inSlotText)}</code> (decrypted by the device after its checks)` : '';
      $('events').innerHTML = s.events.slice().reverse().map(e => `<li>${esc(e[0])} s <b>${esc(e[1])}</b> ${esc(e[2])}</li>`).join('');
      $('actions').innerHTML = s.actions.map(a => `<li>${esc(a)}</li>`).join('');
    }
    async function poll() {
      try { const r = await fetch('/state'); if (r.ok) draw(await r.json()); } catch (e) { $('summary').textContent = 'the lab is not answering'; }
    }
    poll(); setInterval(poll, 300);
    </script></body></html>
    """
}
