// rankwatch serve: paste or drop logs, show the diagnosis. Log-derived text is only ever
// set with textContent; the full report is the server's HTML in a sandboxed iframe.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const paste = $("paste"), drop = $("drop"), status = $("status"), progress = $("progress");
  let limits = { max_bytes: 256 * 1048576, max_files: 10000 };
  let chosen = [];  // [{path, file}] from the pickers or a drop
  let current = null;  // id of the report on screen
  let timer = null, seq = 0;

  fetch("/api/limits").then((r) => r.json()).then((l) => { limits = l; }).catch(() => {});

  const mib = (n) => (n >= 1048576 ? (n / 1048576).toFixed(1) + " MiB" : n >= 1024 ? (n / 1024).toFixed(0) + " KiB" : n + " bytes");

  function say(text, isError) {
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  }

  function setFiles(list) {
    chosen = list;
    if (!list.length) { say(""); return; }
    const total = list.reduce((a, f) => a + f.file.size, 0);
    say(list.length + " file(s), " + mib(total) + " — diagnosing…");
    submit();
  }

  $("files").addEventListener("change", (e) => {
    setFiles(Array.from(e.target.files).map((f) => ({ path: f.name, file: f })));
  });
  $("folder").addEventListener("change", (e) => {
    setFiles(Array.from(e.target.files).map((f) => ({ path: f.webkitRelativePath || f.name, file: f })));
  });

  // a dropped folder: walk it, keeping each file's path relative to what was dropped
  function readAll(reader) {
    return new Promise((resolve, reject) => {
      const out = [];
      const next = () => reader.readEntries((batch) => {
        if (!batch.length) { resolve(out); return; }
        out.push(...batch);
        next();
      }, reject);
      next();
    });
  }
  async function walk(entry, out) {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      out.push({ path: entry.fullPath.replace(/^\/+/, ""), file });
    } else if (entry.isDirectory) {
      for (const child of await readAll(entry.createReader())) await walk(child, out);
    }
  }
  ["dragenter", "dragover"].forEach((t) => drop.addEventListener(t, (e) => { e.preventDefault(); drop.classList.add("over"); }));
  ["dragleave", "drop"].forEach((t) => drop.addEventListener(t, () => drop.classList.remove("over")));
  drop.addEventListener("drop", async (e) => {
    e.preventDefault();
    const items = Array.from(e.dataTransfer.items || []);
    const entries = items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null)).filter(Boolean);
    const out = [];
    try {
      if (entries.length) { for (const en of entries) await walk(en, out); }
      else { Array.from(e.dataTransfer.files).forEach((f) => out.push({ path: f.name, file: f })); }
    } catch (err) {
      say("could not read what was dropped: " + err, true);
      return;
    }
    setFiles(out);
  });

  // a paste is diagnosed as soon as typing stops
  paste.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { if (paste.value.trim()) { chosen = []; submit(); } }, 250);
  });
  $("diagnose").addEventListener("click", submit);
  $("clear").addEventListener("click", () => {
    paste.value = ""; chosen = []; $("files").value = ""; $("folder").value = "";
    $("summary").classList.add("hidden"); $("result").classList.add("hidden"); say("");
  });

  function submit() {
    const text = chosen.length ? "" : paste.value;
    const total = chosen.reduce((a, f) => a + f.file.size, 0) + new Blob([text]).size;
    if (!chosen.length && !text.trim()) { say("Paste a log, or drop files or a folder.", true); return; }
    if (total > limits.max_bytes) {
      say("These logs are " + mib(total) + ", more than this page accepts (" + mib(limits.max_bytes) +
          "). Diagnose them with 'rankwatch diagnose DIR' on the command line, or restart with 'rankwatch serve --max-bytes N'.", true);
      return;
    }
    if (chosen.length > limits.max_files) {
      say(chosen.length + " files: more than this page accepts (" + limits.max_files + ").", true);
      return;
    }
    const form = new FormData();
    if (text) form.append("text", text);
    for (const f of chosen) { form.append("path", f.path); form.append("file", f.file, f.file.name); }
    const mine = ++seq;
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/diagnose");
    xhr.responseType = "text";  // NDJSON: progress lines, then the result
    const big = total > 4 * 1048576;
    progress.classList.toggle("hidden", !big);
    progress.value = 0;
    const lines = () => xhr.responseText.split("\n").filter((l) => l.trim()).map((l) => { try { return JSON.parse(l); } catch (e) { return null; } });
    xhr.upload.onprogress = (e) => {
      if (mine !== seq || !e.lengthComputable) return;
      progress.value = e.loaded / e.total;
      say("Uploading " + mib(e.loaded) + " of " + mib(e.total) + "…");
    };
    xhr.upload.onload = () => { if (mine === seq) { progress.value = 0; say("Diagnosing " + mib(total) + "…"); } };
    xhr.onprogress = () => {
      if (mine !== seq || xhr.status !== 200) return;
      const last = lines().filter((m) => m && m.progress).pop();
      if (!last) return;
      const p = last.progress;
      progress.value = p.total ? p.bytes / p.total : 0;
      say("Diagnosing: " + mib(p.bytes) + " of " + mib(p.total) + " read…");
    };
    xhr.onerror = () => { if (mine === seq) { progress.classList.add("hidden"); say("The rankwatch server did not answer.", true); } };
    xhr.onload = () => {
      if (mine !== seq) return;  // a newer paste or drop replaced this one
      progress.classList.add("hidden");
      const msgs = lines();
      const end = msgs.length ? msgs[msgs.length - 1] : null;
      if (xhr.status !== 200 || !end || !end.result) {
        say((end && end.error) || ("The server answered " + xhr.status + "."), true);
        return;
      }
      show(end.result);
    };
    say(big ? "Uploading…" : "Diagnosing…");
    xhr.send(form);
  }

  function show(body) {
    current = body.id;
    const incs = body.report.incidents || [];
    const top = incs[0];
    const summary = $("summary");
    summary.className = "verdict sev-" + (top ? top.severity : "ok");
    $("verdict-badge").textContent = top ? top.severity.toUpperCase() : "OK";
    $("verdict-title").textContent = top ? top.title : "No incident found.";
    $("verdict-rank").textContent = !top ? "—" : top.initiator.rank === null ? "unknown (the logs cannot tell)" : String(top.initiator.rank);
    $("verdict-failure").textContent = top ? top.failure : "none";
    $("verdict-count").textContent = incs.length + " incident(s)";
    $("verdict-input").textContent = body.files + " file(s), " + mib(body.bytes) + ", " + body.lines + " line(s)";
    summary.classList.remove("hidden");
    $("result").classList.remove("hidden");
    $("download-redacted").href = "/report/" + encodeURIComponent(current) + ".html?redact=1&download=1";
    showReport();
    say("Diagnosed in " + body.seconds.toFixed(2) + " s.");
  }

  function showReport() {
    if (!current) return;
    const url = "/report/" + encodeURIComponent(current) + ".html" + ($("show-redacted").checked ? "?redact=1" : "");
    $("report").src = url;
    $("open-report").href = url;
  }
  $("show-redacted").addEventListener("change", showReport);

  $("copy-redacted").addEventListener("click", async () => {
    if (!current) return;
    const r = await fetch("/report/" + encodeURIComponent(current) + ".md?redact=1");
    if (!r.ok) { say("This report is no longer in memory: diagnose the logs again.", true); return; }
    const md = await r.text();
    try {
      await navigator.clipboard.writeText(md);
      say("The redacted report (Markdown) is on the clipboard.");
    } catch (err) {
      say("The clipboard is not available here: use Download instead.", true);
    }
  });
})();
