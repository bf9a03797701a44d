// The daemon's live page: polls /api/incidents and redraws without reloading.
// Every log-derived string goes through textContent (el() below), never innerHTML.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const PERIOD_MS = 2000;

  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  }

  function stateOf(inc) {
    if (inc.status === "closed") return "closed";
    return (inc.revision || 1) > 1 ? "updated" : "open";
  }

  function incident(inc) {
    const ini = inc.initiator || {};
    const box = el("div", "inc sev-" + inc.severity + (inc.status === "closed" ? " closed" : ""));
    box.dataset.id = inc.id;
    box.dataset.state = stateOf(inc);
    box.dataset.rank = ini.rank === null || ini.rank === undefined ? "" : String(ini.rank);
    const h = el("h3");
    h.append(el("span", "badge", String(inc.severity).toUpperCase()), " ", inc.title, " ", el("code", "", inc.failure),
             el("span", "state " + stateOf(inc), stateOf(inc)));
    box.append(h);
    const meta = el("p", "meta");
    meta.append(el("b", "", "Initiating rank: "), el("span", "rank", ini.rank === null || ini.rank === undefined ? "unknown — the logs cannot tell" : ini.rank),
                " · ", el("b", "", "step: "), ini.step === null || ini.step === undefined ? "?" : String(ini.step),
                " · ", el("b", "", "time: "), ini.time || "?", " · revision " + (inc.revision || 1) + " · ", el("code", "", inc.id));
    box.append(meta);
    const ul = el("ul");
    (inc.root_cause || []).forEach((line) => ul.append(el("li", "", line)));
    box.append(ul);
    if (ini.evidence && ini.evidence.length) {
      box.append(el("div", "label", "Evidence"));
      box.append(el("pre", "", ini.evidence.slice(0, 8).map((e) => e.path + ":" + e.line + ": " + String(e.text).slice(0, 400)).join("\n")));
    }
    if (inc.collateral && inc.collateral.length) {
      const c = inc.collateral.slice(0, 40).map((x) => "rank " + (x.rank === null ? "?" : x.rank) + " (" + x.failure +
        (x.step === null || x.step === undefined ? "" : ", step " + x.step) + ")").join(", ");
      box.append(el("p", "coll", "Collateral (consequences, not causes): " + c + (inc.collateral.length > 40 ? " …" : "")));
    }
    box.append(el("div", "label", "Fix" + (inc.fix_stack ? " (" + inc.fix_stack + ")" : "")), el("pre", "", inc.fix));
    box.append(el("div", "label", "Verify"), el("pre", "", inc.verify));
    return box;
  }

  function render(report) {
    $("job").textContent = report.job;
    const ctx = report.context || {};
    const chips = $("chips");
    chips.replaceChildren(...[["ranks", (report.ranks || []).slice(0, 64).join(", ") || "none"], ["precision", ctx.precision || "unknown"],
      ["GPU", ctx.gpu || "unknown"], ["framework", ctx.framework || "unknown"]].map(([k, v]) => el("span", "chip", k + ": " + v)));
    const incs = report.incidents || [];
    const open = incs.filter((i) => i.status !== "closed");
    const top = open[0] || incs[0];
    $("verdict").className = "verdict sev-" + (top ? top.severity : "ok");
    $("verdict-badge").textContent = top ? String(top.severity).toUpperCase() : "OK";
    $("verdict-title").textContent = top ? top.title : "No incident so far.";
    $("verdict-sub").textContent = top
      ? "Initiated by " + (top.initiator.rank === null ? "an unknown rank" : "rank " + top.initiator.rank) + " · " + top.failure +
        " · " + open.length + " open, " + (incs.length - open.length) + " closed"
      : "Watching the job's logs.";
    const list = $("incidents");
    list.replaceChildren(...(incs.length ? incs.map(incident) : [el("p", "status", "None so far.")]));
  }

  async function tick() {
    try {
      const r = await fetch("/api/incidents", { cache: "no-store" });
      if (!r.ok) throw new Error("HTTP " + r.status);
      render(await r.json());
      $("updated").textContent = "· refreshed " + new Date().toLocaleTimeString();
      $("updated").classList.remove("error");
    } catch (err) {
      $("updated").textContent = "· the daemon did not answer (" + err.message + "); retrying";
      $("updated").classList.add("error");
    }
    setTimeout(tick, PERIOD_MS);
  }
  tick();
})();
