/// Class mode's first page: the class code and a name, posted to `/join` (a plain form: it works
/// without script). Shown to a request without a session, and again with the reason after a refusal.
public enum LabJoinPage {
  public static func html(message: String? = nil) -> String {
    let said = message.map { "<p id=\"join-error\" class=\"fail\">\(escape($0))</p>" } ?? ""
    return """
      <!doctype html>
      <html lang="en"><head><meta charset="utf-8"><title>BlueOTA lab: join the class</title>
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <style>
      body{font:15px/1.4 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
      header{background:#1d2330;color:#fff;padding:8px 16px} header h1{font-size:18px;margin:0}
      form{background:#fff;max-width:420px;margin:40px auto;padding:16px 20px;border-radius:6px;box-shadow:0 1px 2px #0002}
      label{display:block;margin:10px 0} input{font:inherit;width:100%;box-sizing:border-box;padding:6px}
      button{font:inherit;padding:6px 14px;margin-top:8px} .fail{color:#b3261e;font-weight:600}
      </style></head><body>
      <header><h1>BlueOTA lab</h1></header>
      <form method="post" action="/join" id="join">
      <p>Your teacher runs this lab for the class. Give the class code and your name: you get a device
      of your own (firmware 1.0.0 in slot A), which only you see and update.</p>
      \(said)
      <label>class code <input id="code" name="code" autocomplete="off" required maxlength="64"></label>
      <label>your name <input id="name" name="name" required maxlength="\(LabSessionTable.nameLimit)"></label>
      <button id="join-button" type="submit">Join</button>
      </form></body></html>
      """
  }

  static func escape(_ text: String) -> String {
    var out = ""
    for character in text {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      default: out.append(character)
      }
    }
    return out
  }
}
