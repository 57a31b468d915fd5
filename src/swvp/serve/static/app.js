// swvp's web page: choose a model, send text to POST /process (UDPipe's REST API), and show each sentence of the
// CoNLL-U answer as a table and a dependency tree drawn in SVG. Plain JavaScript, no library, nothing fetched but
// the server's own /models and /process (addressed relatively, so the page also works behind a path prefix).
"use strict";

(function () {
  const SVG_NS = "http://www.w3.org/2000/svg";  // a namespace name, never fetched
  const MAX_SHOWN = 200;  // sentences drawn; the download always has them all

  // ---------------------------------------------------------------------------------------------------------------
  // CoNLL-U → sentences
  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Parse CoNLL-U text into sentences: {comments, text, sentId, rows, words}. rows keep the file's order and hold
   * every line (kind "word", "mwt" for a multiword token's range "1-2", "empty" for an empty node "1.1"); words are
   * the syntactic words only (the tree's nodes). A malformed line is kept as kind "bad" rather than dropped, so the
   * table shows what the server sent.
   */
  function parseConllu(text) {
    const sentences = [];
    let cur = null;
    const finish = () => {
      if (cur && (cur.rows.length || cur.comments.length)) sentences.push(cur);
      cur = null;
    };
    const lines = String(text).replace(/^\uFEFF/, "").split(/\r\n|\r|\n/);
    for (const line of lines) {
      if (line.trim() === "") { finish(); continue; }
      if (!cur) cur = { comments: [], text: null, sentId: null, rows: [], words: [] };
      if (line.startsWith("#")) {
        cur.comments.push(line);
        const m = /^#\s*(text|sent_id)\s*=\s?(.*)$/.exec(line);
        if (m && m[1] === "text") cur.text = m[2];
        if (m && m[1] === "sent_id") cur.sentId = m[2].trim();
        continue;
      }
      const cols = line.split("\t");
      while (cols.length < 10) cols.push("_");
      const [id, form, lemma, upos, xpos, feats, head, deprel, deps, misc] = cols;
      const row = { id, form, lemma, upos, xpos, feats, head, deprel, deps, misc, kind: "bad" };
      let m;
      if (/^\d+$/.test(id)) {
        row.kind = "word";
        row.n = Number(id);
        row.headN = /^\d+$/.test(head) ? Number(head) : null;
        cur.words.push(row);
      } else if ((m = /^(\d+)-(\d+)$/.exec(id))) {
        row.kind = "mwt";
        row.from = Number(m[1]);
        row.to = Number(m[2]);
      } else if (/^\d+\.\d+$/.test(id)) {
        row.kind = "empty";
      }
      cur.rows.push(row);
    }
    finish();
    return sentences;
  }

  /** The sentence's text: its "# text" comment, else its tokens joined by their SpaceAfter. */
  function sentenceText(sent) {
    if (sent.text !== null) return sent.text;
    let out = "";
    let coveredTo = 0;
    for (const row of sent.rows) {
      if (row.kind === "mwt") coveredTo = row.to;
      else if (row.kind !== "word" || row.n <= coveredTo) continue;
      out += row.form + (/(^|\|)SpaceAfter=No(\||$)/.test(row.misc) ? "" : " ");
    }
    return out.trim();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // the tree
  // ---------------------------------------------------------------------------------------------------------------

  const FONT = "15px system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";
  const SMALL_FONT = "12px system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";
  let measureCtx = null;

  function textWidth(s, font) {
    if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
    if (!measureCtx) return s.length * 8;
    measureCtx.font = font;
    return measureCtx.measureText(s).width;
  }

  /**
   * Heights of the arcs, in levels: an arc rises above every arc it spans and above any arc of the same level whose
   * span overlaps its own (a non-projective tree's crossing arcs), so that no two horizontal runs coincide. arcs:
   * [{lo, hi}] in word positions; returns a level ≥ 1 per arc, in the given order.
   */
  function arcLevels(arcs) {
    const order = arcs.map((a, i) => i).sort((i, j) =>
      (arcs[i].hi - arcs[i].lo) - (arcs[j].hi - arcs[j].lo) || arcs[i].lo - arcs[j].lo);
    const levels = new Array(arcs.length).fill(0);
    const placed = [];
    for (const i of order) {
      const a = arcs[i];
      let level = 1;
      for (const j of placed) {
        const b = arcs[j];
        if (b.lo >= a.lo && b.hi <= a.hi) level = Math.max(level, levels[j] + 1);
      }
      let clash = true;
      while (clash) {
        clash = false;
        for (const j of placed) {
          const b = arcs[j];
          if (levels[j] === level && Math.max(a.lo, b.lo) < Math.min(a.hi, b.hi)) { clash = true; level++; break; }
        }
      }
      levels[i] = level;
      placed.push(i);
    }
    return levels;
  }

  function svgEl(name, attrs, text) {
    const el = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
  }

  /**
   * Draw one sentence's tree: words left to right (FORM over UPOS), an arc above the words from each head to its
   * dependent with the DEPREL on it and an arrowhead on the dependent, a vertical arrow into each root, a bracket
   * under each multiword token with its surface form. Empty nodes ("1.1") are not drawn.
   */
  function renderTree(sent, index) {
    const words = sent.words;
    const pos = new Map();  // word ID → position
    words.forEach((w, i) => pos.set(w.n, i));

    // columns wide enough for the form, the tag and the labels of the arcs that end there
    const GAP = 22;
    const widths = words.map((w) => Math.max(textWidth(w.form, FONT), textWidth(w.upos, SMALL_FONT), 24) + GAP);
    const xs = [];
    let x = 12;
    for (const wd of widths) { xs.push(x + wd / 2); x += wd; }
    const width = Math.ceil(x + 12);

    const arcs = [];
    const roots = [];
    for (const w of words) {
      if (w.headN === null) continue;
      if (w.headN === 0 || !pos.has(w.headN)) { roots.push(w); continue; }
      const h = pos.get(w.headN);
      const d = pos.get(w.n);
      arcs.push({ word: w, head: h, dep: d, lo: Math.min(h, d), hi: Math.max(h, d) });
    }
    const levels = arcLevels(arcs);
    const maxLevel = levels.reduce((a, b) => Math.max(a, b), 0);

    const LEVEL_H = 26;
    const TOP = 20;
    const baseY = TOP + (maxLevel + 1) * LEVEL_H + 6;  // where arcs end, just above the words
    const wordY = baseY + 20;
    const tagY = wordY + 18;
    const hasMwt = sent.rows.some((r) => r.kind === "mwt");
    const height = tagY + (hasMwt ? 34 : 12);

    const svg = svgEl("svg", {
      class: "tree", "data-sentence": index, width, height, viewBox: `0 0 ${width} ${height}`,
      role: "img", "aria-label": `Dependency tree of sentence ${index}`,
    });
    svg.appendChild(svgEl("title", {}, `Dependency tree of sentence ${index}: ${sentenceText(sent)}`));

    const arcLayer = svgEl("g", { class: "arcs" });
    const labelLayer = svgEl("g", { class: "labels" });
    const wordLayer = svgEl("g", { class: "words" });
    svg.append(arcLayer, labelLayer, wordLayer);

    // an arc leaves its head beside the word's centre (where the arrow into the head lands), on its dependent's
    // side: the longest arc nearest the centre and each shorter one further out, so that arcs of one head nest
    const R = 7;
    const STEP = 5;
    const leave = new Array(arcs.length).fill(0);
    words.forEach((w, i) => {
      for (const side of [-1, 1]) {
        const out = arcs.map((a, k) => k).filter((k) => arcs[k].head === i && Math.sign(arcs[k].dep - i) === side)
          .sort((p, q) => (arcs[q].hi - arcs[q].lo) - (arcs[p].hi - arcs[p].lo));
        const room = Math.max(2, widths[i] / 2 - 4);
        out.forEach((k, j) => { leave[k] = side * Math.min(room, STEP * (j + 1)); });
      }
    });
    arcs.forEach((a, k) => {
      const top = baseY - levels[k] * LEVEL_H;
      const hx = xs[a.head] + leave[k];
      const dx = xs[a.dep];
      const dir = dx > hx ? 1 : -1;
      const r = Math.min(R, Math.abs(dx - hx) / 2);
      const sweepUp = dir > 0 ? 1 : 0;
      const d = `M ${hx} ${baseY} V ${top + r} A ${r} ${r} 0 0 ${sweepUp} ${hx + dir * r} ${top} ` +
        `H ${dx - dir * r} A ${r} ${r} 0 0 ${sweepUp} ${dx} ${top + r} V ${baseY - 6}`;
      const g = svgEl("g", { class: "dep", "data-word": a.word.id, "data-head": a.word.head });
      const path = svgEl("path", { class: "arc", d, "data-word": a.word.id });
      path.appendChild(svgEl("title", {}, `${a.word.deprel}: ${words[a.head].form} → ${a.word.form}`));
      g.appendChild(path);
      g.appendChild(svgEl("path", {
        class: "arrowhead", d: `M ${dx - 4} ${baseY - 7} L ${dx + 4} ${baseY - 7} L ${dx} ${baseY} Z`,
      }));
      arcLayer.appendChild(g);
      labelLayer.appendChild(svgEl("text", {
        class: "arc-label", x: (hx + dx) / 2, y: top + 4, "text-anchor": "middle", "data-word": a.word.id,
      }, a.word.deprel));
    });

    const rootTop = TOP - 6;
    for (const w of roots) {
      const dx = xs[pos.get(w.n)];
      const g = svgEl("g", { class: "dep root", "data-word": w.id, "data-head": w.head });
      const path = svgEl("path", { class: "arc root", d: `M ${dx} ${rootTop} V ${baseY - 6}`, "data-word": w.id });
      path.appendChild(svgEl("title", {}, `${w.deprel}: ${w.form}`));
      g.appendChild(path);
      g.appendChild(svgEl("path", {
        class: "arrowhead", d: `M ${dx - 4} ${baseY - 7} L ${dx + 4} ${baseY - 7} L ${dx} ${baseY} Z`,
      }));
      arcLayer.appendChild(g);
      labelLayer.appendChild(svgEl("text", {
        class: "arc-label root-label", x: dx + 5, y: rootTop + 10, "text-anchor": "start", "data-word": w.id,
      }, w.deprel === "_" ? "root" : w.deprel));
    }

    words.forEach((w, i) => {
      const g = svgEl("g", { class: "word", "data-word": w.id });
      if (w.headN === 0) g.classList.add("is-root");
      g.appendChild(svgEl("text", { class: "form", x: xs[i], y: wordY, "text-anchor": "middle" }, w.form));
      g.appendChild(svgEl("text", { class: "upos", x: xs[i], y: tagY, "text-anchor": "middle" }, w.upos));
      wordLayer.appendChild(g);
    });

    for (const row of sent.rows) {
      if (row.kind !== "mwt" || !pos.has(row.from) || !pos.has(row.to)) continue;
      const x1 = xs[pos.get(row.from)] - widths[pos.get(row.from)] / 2 + 4;
      const x2 = xs[pos.get(row.to)] + widths[pos.get(row.to)] / 2 - 4;
      const y = tagY + 8;
      const g = svgEl("g", { class: "mwt", "data-word": row.id });
      g.appendChild(svgEl("path", { class: "mwt-bracket", d: `M ${x1} ${y} v 5 H ${x2} v -5` }));
      g.appendChild(svgEl("text", { class: "mwt-form", x: (x1 + x2) / 2, y: y + 19, "text-anchor": "middle" },
        row.form));
      wordLayer.appendChild(g);
    }
    return svg;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // the table
  // ---------------------------------------------------------------------------------------------------------------

  const COLUMNS = ["id", "form", "lemma", "upos", "feats", "head", "deprel"];

  function renderTable(sent, index) {
    const table = document.createElement("table");
    table.className = "words";
    table.dataset.sentence = index;
    const caption = document.createElement("caption");
    caption.className = "visually-hidden";
    caption.textContent = `Words of sentence ${index}`;
    table.appendChild(caption);
    const thead = table.createTHead().insertRow();
    for (const c of COLUMNS) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = c.toUpperCase();
      thead.appendChild(th);
    }
    const formOf = new Map(sent.words.map((w) => [w.n, w.form]));
    const tbody = table.createTBody();
    for (const row of sent.rows) {
      const tr = tbody.insertRow();
      tr.dataset.id = row.id;
      if (row.kind === "word") {
        tr.className = "word";
        for (const c of COLUMNS) {
          const td = tr.insertCell();
          td.className = c;
          if (c === "feats") {
            // a break opportunity after each "|", so that long FEATS wrap on narrow screens
            row.feats.split("|").forEach((f, i, all) => {
              td.appendChild(document.createTextNode(f + (i + 1 < all.length ? "|" : "")));
              if (i + 1 < all.length) td.appendChild(document.createElement("wbr"));
            });
          } else {
            td.textContent = row[c];
          }
          if (c === "head" && row.headN !== null) {
            td.title = row.headN === 0 ? "the root" : (formOf.get(row.headN) || "");
          }
        }
      } else {
        // a multiword token's range, an empty node or a line we could not read: its ID and FORM, the rest spanned
        tr.className = row.kind === "mwt" ? "mwt" : row.kind === "empty" ? "empty-node" : "bad";
        const id = tr.insertCell();
        id.className = "id";
        id.textContent = row.id;
        const form = tr.insertCell();
        form.className = "form";
        form.textContent = row.form;
        const rest = tr.insertCell();
        rest.colSpan = COLUMNS.length - 2;
        rest.className = "note";
        rest.textContent = row.kind === "mwt" ? `multiword token: words ${row.from}–${row.to}`
          : row.kind === "empty" ? `empty node ${row.upos !== "_" ? row.upos : ""}`.trim() : "unreadable line";
      }
    }
    return table;
  }

  // hovering a word in the table or the tree marks it in both
  function linkHover(article) {
    const mark = (id, on) => {
      for (const el of article.querySelectorAll(`[data-word="${CSS.escape(id)}"], tr[data-id="${CSS.escape(id)}"]`)) {
        el.classList.toggle("hl", on);
      }
    };
    for (const el of article.querySelectorAll("tr.word, g.word")) {
      const id = el.dataset.id || el.dataset.word;
      el.addEventListener("mouseenter", () => mark(id, true));
      el.addEventListener("mouseleave", () => mark(id, false));
    }
  }

  function renderSentence(sent, index) {
    const article = document.createElement("article");
    article.className = "sentence";
    article.dataset.sentence = index;
    const h = document.createElement("h2");
    h.textContent = `Sentence ${index}` + (sent.sentId && sent.sentId !== String(index) ? ` (${sent.sentId})` : "");
    const text = document.createElement("p");
    text.className = "sentence-text";
    text.textContent = sentenceText(sent);
    const scroll = document.createElement("div");
    scroll.className = "tree-scroll";
    scroll.tabIndex = 0;  // a keyboard user can scroll a wide tree
    scroll.setAttribute("aria-label", `Tree of sentence ${index}, scrolls sideways`);
    scroll.appendChild(renderTree(sent, index));
    const tableScroll = document.createElement("div");
    tableScroll.className = "table-scroll";
    tableScroll.appendChild(renderTable(sent, index));
    article.append(h, text, scroll, tableScroll);
    linkHover(article);
    return article;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // the form
  // ---------------------------------------------------------------------------------------------------------------

  const $ = (id) => document.getElementById(id);
  let models = {};
  let lastResult = null;

  function showError(message) {
    const box = $("error");
    box.textContent = message;
    box.hidden = !message;
    if (message) {  // an earlier result no longer answers what the form holds
      $("results").hidden = true;
      lastResult = null;
    }
  }

  function setStatus(message) { $("status").textContent = message; }

  async function loadModels() {
    const select = $("model");
    try {
      const resp = await fetch("models", { headers: { Accept: "application/json" } });
      if (!resp.ok) throw new Error(firstLine(await resp.text()) || `HTTP ${resp.status}`);
      const answer = await resp.json();
      models = answer.models || {};
      select.replaceChildren();
      for (const name of Object.keys(models).sort()) {
        const opt = document.createElement("option");
        opt.value = name;
        opt.textContent = `${name} (${(models[name] || []).join(", ")})`;
        select.appendChild(opt);
      }
      if (answer.default_model && answer.default_model in models) select.value = answer.default_model;
      if (!select.options.length) {
        select.appendChild(new Option("no models loaded", ""));
        select.disabled = true;
      }
      document.body.dataset.models = "ready";
    } catch (err) {
      select.replaceChildren(new Option("models unavailable", ""));
      showError(`Could not list the models: ${err.message}`);
      document.body.dataset.models = "failed";
    }
  }

  function firstLine(s) {
    return String(s).split(/\r?\n/).find((l) => l.trim() !== "") || "";
  }

  function requestBody() {
    const body = new FormData();
    const file = $("file").files[0];
    if (file) body.append("data", file, file.name);
    else body.append("data", $("data").value);
    const model = $("model").value;
    if (model) body.append("model", model);
    const input = $("input").value;
    const offers = models[model] || ["tokenizer", "tagger", "parser"];
    if (input === "raw") {
      if (offers.includes("tokenizer")) body.append("tokenizer", "");
    } else {
      body.append("input", input);
    }
    if (offers.includes("tagger")) body.append("tagger", "");
    if (offers.includes("parser")) body.append("parser", "");
    return body;
  }

  async function submit(event) {
    if (event) event.preventDefault();
    const button = $("submit");
    if (button.disabled) return;
    button.disabled = true;
    showError("");
    setStatus("Parsing…");
    document.body.dataset.state = "busy";
    try {
      const resp = await fetch("process", { method: "POST", body: requestBody() });
      const body = await resp.text();
      if (!resp.ok) {
        showError(firstLine(body) || `The server answered ${resp.status} ${resp.statusText}.`);
        setStatus("");
        document.body.dataset.state = "error";
        return;
      }
      let answer;
      try {
        answer = JSON.parse(body);
      } catch (err) {
        throw new Error("the server's answer is not JSON");
      }
      showResult(answer);
      document.body.dataset.state = "done";
    } catch (err) {
      showError(`The request failed: ${err.message}`);
      setStatus("");
      document.body.dataset.state = "error";
    } finally {
      button.disabled = false;
    }
  }

  function showResult(answer) {
    lastResult = { model: answer.model || $("model").value, result: String(answer.result || "") };
    const sentences = parseConllu(lastResult.result);
    const container = $("sentences");
    container.replaceChildren();
    const shown = sentences.slice(0, MAX_SHOWN);
    shown.forEach((s, i) => container.appendChild(renderSentence(s, i + 1)));
    const nWords = sentences.reduce((n, s) => n + s.words.length, 0);
    let summary = `${sentences.length} sentence${sentences.length === 1 ? "" : "s"}, ` +
      `${nWords} word${nWords === 1 ? "" : "s"}; model ${lastResult.model}.`;
    if (sentences.length > shown.length) summary += ` The first ${shown.length} are shown; the download has all.`;
    if (!sentences.length) summary = "The answer has no sentences.";
    $("summary").textContent = summary;
    const ack = answer.acknowledgements;
    const ackText = (Array.isArray(ack) ? ack.join(" ") : String(ack || "")).trim();
    $("acknowledgements").textContent = ackText ? `Acknowledgements: ${ackText}` : "";
    $("results").hidden = false;
    setStatus("Done.");
  }

  function download() {
    if (!lastResult) return;
    const blob = new Blob([lastResult.result], { type: "text/plain;charset=utf-8" });
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = `${(lastResult.model || "swvp").replace(/[^\w.-]+/g, "_")}.conllu`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  function init() {
    const form = $("process-form");
    form.addEventListener("submit", submit);
    form.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
    });
    $("download").addEventListener("click", download);
    $("file").addEventListener("change", () => {
      const file = $("file").files[0];
      $("clear-file").hidden = !file;
      $("data").disabled = Boolean(file);
      setStatus(file ? `${file.name} will be sent (${file.size.toLocaleString()} bytes).` : "");
    });
    $("clear-file").addEventListener("click", () => {
      $("file").value = "";
      $("file").dispatchEvent(new Event("change"));
      $("data").focus();
    });
    loadModels();
  }

  // for tests and for anyone who wants the drawing elsewhere
  window.swvp = { parseConllu, sentenceText, arcLevels, renderTree, renderTable };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
