// perfgate site viewer: the overview table and the charts, drawn on canvas
// and SVG by this file alone. Data comes from data/*.js files that call
// perfgateData(key, value), loaded as scripts so the site works from file://.
"use strict";
(function () {
  var loaded = {}, waiting = {};
  window.perfgateData = function (key, value) {
    loaded[key] = value;
    (waiting[key] || []).forEach(function (w) { w.ok(value); });
    delete waiting[key];
  };
  function load(key) {
    if (loaded[key]) return Promise.resolve(loaded[key]);
    return new Promise(function (ok, fail) {
      var first = !waiting[key];
      (waiting[key] = waiting[key] || []).push({ ok: ok, fail: fail });
      if (!first) return;
      var s = document.createElement("script");
      s.src = "data/" + key.split("/").map(encodeURIComponent).join("/") + ".js";
      s.onerror = function () {
        (waiting[key] || []).forEach(function (w) { w.fail(new Error("no data file " + s.src)); });
        delete waiting[key];
        s.remove();
      };
      document.head.appendChild(s);
    });
  }

  var $ = function (id) { return document.getElementById(id); };
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }
  function fmt(v) {
    if (v == null || !isFinite(v)) return "\u2013";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
    return (+v.toPrecision(a >= 1000 ? 6 : 4)).toLocaleString("en-US", { maximumFractionDigits: 6 });
  }
  function pct(v) {
    if (v == null || !isFinite(v)) return "\u2013";
    return (v > 0 ? "+" : v < 0 ? "\u2212" : "\u00b1") + Math.abs(v).toFixed(Math.abs(v) < 10 ? 1 : 0) + "%";
  }
  // driftText describes one of watch's drifts: "drift +30% since abc1234
  // (+10%/100 commits), still moving" (or "stopped at e5f6a7b"), as
  // watch's report says it.
  function driftText(a) {
    return "drift " + pct(a.pct) + " since " + a.sha.slice(0, 7) + " (" + pct(a.per100) + "/100 commits), " +
      (a.moving ? "still moving" : a.end ? "stopped at " + a.end.slice(0, 7) : "stopped");
  }
  function worse(change, dir) {
    if (change == null || !isFinite(change) || change === 0) return "";
    if (dir === "lower") return change > 0 ? "worse" : "better";
    if (dir === "higher") return change < 0 ? "worse" : "better";
    return "";
  }
  function labelText(l) { return Object.keys(l || {}).sort().map(function (k) { return k + "=" + l[k]; }); }
  var flagText = { regression: "\u25b2 regression", improvement: "\u25bc improved", shift: "\u25c6 off the band" };

  // ---- overview ----
  var index = null, rows = [], sortKey = null, sortDir = 1;
  function showOverview() {
    $("chart").hidden = true;
    $("curve").hidden = true;
    $("overview").hidden = false;
    if (index) { document.title = index.title; return Promise.resolve(); }
    return load("index").then(function (ix) {
      index = ix;
      document.title = ix.title;
      $("home").textContent = ix.title;
      addUp(ix.up);
      $("meta").textContent = ix.series + " series, " + ix.rows.length + " charts, " + ix.commits + " commits" +
        (ix.order === "measured" ? " in order of their first run" : (ix.ref ? " of " + ix.ref : "")) +
        (ix.open ? ", " + ix.open + " open regression" + (ix.open === 1 ? "" : "s") + " (perfgate watch)" : "");
      $("agohead").textContent = "vs " + ix.ago + " ago";
      $("agohead").title = "change against the median " + ix.ago + " measured commits earlier";
      buildRows(ix);
      buildCurves(ix);
      applyFilter();
      document.body.dataset.overviewMs = performance.now().toFixed(0);
    });
  }
  function buildRows(ix) {
    var tb = document.querySelector("#table tbody");
    $("empty").hidden = ix.rows.length > 0;
    rows = ix.rows.map(function (r) {
      var tr = el("tr", { "data-series": r.s, "data-metric": r.m });
      var name = el("td", { class: "name" });
      var a = el("a", { href: "#" + r.s + "/" + r.file }, r.b);
      name.appendChild(a);
      name.appendChild(document.createElement("br"));
      labelText(r.l).forEach(function (t) { name.appendChild(el("span", { class: "chip" }, t)); });
      tr.appendChild(name);
      tr.appendChild(el("td", {}, r.ml));
      tr.appendChild(el("td", { class: "num" }, fmt(r.v) + (r.u ? " " + r.u : "")));
      tr.appendChild(el("td", { class: "num " + worse(r.c1, r.d) }, pct(r.c1)));
      tr.appendChild(el("td", { class: "num " + worse(r.cn, r.d) }, pct(r.cn)));
      var sp = el("td", { class: "spark" });
      sp.appendChild(spark(r.sp, r.ml));
      tr.appendChild(sp);
      var st = el("td", { class: r.flag ? "flag-" + r.flag : "" }, flagText[r.flag] || "ok");
      if (r.w && r.w.length) {
        // perfgate watch's open regressions: the newest one's change and commit.
        var w = r.w[r.w.length - 1];
        st.appendChild(document.createElement("br"));
        st.appendChild(el("span", { class: "why" }, w.drift ? driftText(w) : pct(w.pct) + " at " + w.sha.slice(0, 7)));
        st.title = r.w.map(function (a) {
          return "perfgate watch: open regression " + (a.drift ? driftText(a) : pct(a.pct) + " at " + a.sha.slice(0, 7)) +
            " (" + fmt(a.before) + " \u2192 " + fmt(a.after) + ", confidence " + a.conf + ")";
        }).join("\n");
      }
      tr.appendChild(st);
      tr.addEventListener("click", function (ev) { if (ev.target.tagName !== "A") location.hash = r.s + "/" + r.file; });
      var hay = [r.b, r.m, r.ml, r.s, r.flag, r.w ? "watch" : ""].concat(labelText(r.l)).join(" ").toLowerCase();
      tb.appendChild(tr);
      return { r: r, tr: tr, hay: hay };
    });
  }
  function spark(ys, label) {
    var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 120 28");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", label + ": last " + ys.length + " medians");
    if (ys.length > 0) {
      var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys), span = hi - lo || 1;
      var pts = ys.map(function (y, i) {
        var x = ys.length === 1 ? 60 : 2 + (116 * i) / (ys.length - 1);
        return x.toFixed(1) + "," + (25 - (22 * (y - lo)) / span).toFixed(1);
      });
      var pl = document.createElementNS(ns, "polyline");
      pl.setAttribute("points", pts.join(" "));
      svg.appendChild(pl);
    }
    return svg;
  }
  function applyFilter() {
    var toks = $("filter").value.toLowerCase().split(/\s+/).filter(Boolean), only = $("onlyflag").checked, n = 0;
    rows.forEach(function (x) {
      var show = toks.every(function (t) { return x.hay.indexOf(t) >= 0; }) && (!only || x.r.flag === "regression");
      x.tr.hidden = !show;
      if (show) n++;
    });
    $("count").textContent = n + " of " + rows.length + " shown";
  }
  function sortBy(key) {
    sortDir = sortKey === key ? -sortDir : 1;
    sortKey = key;
    var val = {
      name: function (r) { return (r.b + " " + labelText(r.l).join(" ")).toLowerCase(); },
      metric: function (r) { return r.ml.toLowerCase(); },
      v: function (r) { return r.v; }, c1: function (r) { return r.c1; }, cn: function (r) { return r.cn; },
      flag: function (r) { return { regression: 0, shift: 1, improvement: 2 }[r.flag] != null ? { regression: 0, shift: 1, improvement: 2 }[r.flag] : 3; }
    }[key];
    rows.sort(function (a, b) {
      var x = val(a.r), y = val(b.r);
      if (x == null) return 1;
      if (y == null) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * sortDir;
    });
    var tb = document.querySelector("#table tbody");
    rows.forEach(function (x) { tb.appendChild(x.tr); });
    document.querySelectorAll("#table th").forEach(function (th) {
      var b = th.querySelector("button");
      if (b && b.dataset.sort === key) th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    });
  }

  // ---- chart ----
  var C = null; // the chart shown: data, commits, view
  function showChart(sid, file) {
    $("overview").hidden = true;
    $("curve").hidden = true;
    $("chart").hidden = false;
    // Generated ids are slugs; anything else is a hand-written
    // #benchmark/metric link that the overview's data resolves.
    var isID = /^[a-z0-9_.-]+$/.test(sid) && /^[a-z0-9_.-]+$/.test(file);
    var chart = isID ? load("s/" + sid + "/" + file).catch(function () { return resolveAlias(sid, file); }) : resolveAlias(sid, file);
    return Promise.all([chart, load("commits")])
      .then(function (got) {
        if (!got[0]) throw new Error("no chart " + sid + "/" + file);
        $("home").textContent = got[1].title;
        openChart(got[0], got[1]);
      })
      .catch(function (e) {
        $("ctitle").textContent = "No such chart";
        $("csub").textContent = String(e.message) + "; pick one from the overview.";
        C = null;
        clearCanvas();
      });
  }
  // resolveAlias opens #benchmark/metric links written by hand.
  function resolveAlias(bench, m) {
    return load("index").then(function (ix) {
      var r = ix.rows.filter(function (r) { return (r.b === bench || r.s === bench) && (r.m === m || r.file === m || r.ml === m); })[0];
      if (!r) return null;
      history.replaceState(null, "", "#" + r.s + "/" + r.file);
      return load("s/" + r.s + "/" + r.file);
    });
  }
  // addUp links the header to the index of several repositories, once.
  function addUp(href) {
    if (!href || $("up")) return;
    $("home").parentNode.insertBefore(el("a", { href: href, id: "up" }, "\u2190 all repositories"), $("home"));
  }
  function openChart(d, cm) {
    addUp(cm.up);
    var xs = [], last = -1;
    for (var i = 0; i < d.runs.x.length; i++) if (d.runs.x[i] !== last) { xs.push(d.runs.x[i]); last = d.runs.x[i]; }
    C = { d: d, cm: cm, xs: xs, forge: cm.forge || {}, ref: cm.ref, order: cm.order, hover: -1 };
    resetView();
    document.title = d.bench + " \u2013 " + d.label;
    $("ctitle").textContent = d.bench + ": " + d.label;
    var dirText = { lower: "lower is better", higher: "higher is better" }[d.dir] || "no better direction";
    $("csub").textContent = (labelText(d.labels).join(", ") || "no labels") + " \u00b7 " + d.runs.y.length + " runs at " + xs.length +
      " commits \u00b7 " + dirText + (d.flag ? " \u00b7 latest: " + (flagText[d.flag] || d.flag) : "") +
      (d.watch || []).map(function (a) {
        return " \u00b7 watch: open regression " + (a.drift ? driftText(a) : pct(a.pct) + " at " + a.sha.slice(0, 7));
      }).join("");
    $("canvas").setAttribute("aria-label", "Chart of " + d.label + " for " + d.bench + " over " + xs.length + " commits");
    draw();
    linkCurve(d);
  }
  function resetView() {
    if (!C) return;
    var a = C.xs.length ? C.xs[0] : 0, b = C.xs.length ? C.xs[C.xs.length - 1] : 1;
    if (b - a < 4) { a -= 2; b += 2; }
    var pad = (b - a) * 0.02;
    C.x0 = a - pad; C.x1 = b + pad; C.full = [C.x0, C.x1];
  }
  function cssVar(n) { return getComputedStyle(document.documentElement).getPropertyValue(n).trim(); }
  function clearCanvas() { var c = $("canvas"); c.getContext("2d").clearRect(0, 0, c.width, c.height); }
  var M = { l: 72, r: 14, t: 12, b: 50 };
  function niceTicks(lo, hi, n) {
    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span / n))), err = span / n / step;
    step *= err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  function lowerBound(a, v) { var lo = 0, hi = a.length; while (lo < hi) { var m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; } return lo; }
  var pending = false;
  function draw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(); });
  }
  function render() {
    if (!C) return;
    var started = performance.now();
    var cv = $("canvas"), dpr = window.devicePixelRatio || 1, W = cv.clientWidth, H = cv.clientHeight;
    if (cv.width !== Math.round(W * dpr) || cv.height !== Math.round(H * dpr)) { cv.width = Math.round(W * dpr); cv.height = Math.round(H * dpr); }
    var g = cv.getContext("2d"), d = C.d, runs = d.runs;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    var pw = W - M.l - M.r, ph = H - M.t - M.b;
    var i0 = lowerBound(runs.x, C.x0), i1 = lowerBound(runs.x, C.x1 + 1e-9);
    var lo = Infinity, hi = -Infinity;
    for (var i = i0; i < i1; i++) { if (runs.y[i] < lo) lo = runs.y[i]; if (runs.y[i] > hi) hi = runs.y[i]; }
    if (d.band && d.band.to >= C.x0 && d.band.from <= C.x1) { lo = Math.min(lo, d.band.lo); hi = Math.max(hi, d.band.hi); }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi - lo < Math.abs(hi) * 1e-9 || hi === lo) { lo -= Math.abs(lo) * 0.05 || 1; hi += Math.abs(hi) * 0.05 || 1; }
    var padY = (hi - lo) * 0.06; lo -= padY; hi += padY;
    var X = function (c) { return M.l + ((c - C.x0) / (C.x1 - C.x0)) * pw; };
    var Y = function (v) { return M.t + ph - ((v - lo) / (hi - lo)) * ph; };
    C.X = X; C.Y = Y; C.plot = { pw: pw, ph: ph };
    var fg = cssVar("--fg"), muted = cssVar("--muted"), line = cssVar("--line");
    g.font = "12px system-ui, sans-serif";
    // grid and y axis
    g.strokeStyle = line; g.fillStyle = muted; g.lineWidth = 1; g.textAlign = "right"; g.textBaseline = "middle";
    niceTicks(lo, hi, Math.max(3, Math.floor(ph / 60))).forEach(function (v) {
      var y = Math.round(Y(v)) + 0.5;
      g.beginPath(); g.moveTo(M.l, y); g.lineTo(M.l + pw, y); g.stroke();
      g.fillText(fmt(v), M.l - 6, y);
    });
    g.save();
    g.translate(14, M.t + ph / 2); g.rotate(-Math.PI / 2); g.textAlign = "center"; g.fillStyle = fg;
    g.fillText(d.label + (d.unit && d.label.indexOf("(" + d.unit + ")") < 0 ? " (" + d.unit + ")" : ""), 0, 0);
    g.restore();
    // x axis: commits
    g.textAlign = "center"; g.textBaseline = "top"; g.fillStyle = muted;
    var ticks = niceTicks(Math.max(0, C.x0), C.x1, Math.max(2, Math.floor(pw / 110))).filter(function (t) { return t === Math.floor(t) && t < C.cm.sha.length; });
    ticks.forEach(function (t) {
      var x = Math.round(X(t)) + 0.5;
      g.strokeStyle = line; g.beginPath(); g.moveTo(x, M.t + ph); g.lineTo(x, M.t + ph + 4); g.stroke();
      g.fillText(C.cm.sha[t].slice(0, 7), x, M.t + ph + 6);
    });
    g.fillStyle = fg;
    g.fillText((C.order === "measured" ? "commits in order of their first run" : "first-parent commits" + (C.ref ? " of " + C.ref : "")) + ", oldest to newest", M.l + pw / 2, M.t + ph + 28);
    g.save();
    g.beginPath(); g.rect(M.l, M.t, pw, ph); g.clip();
    // noise band
    if (d.band) {
      var bx0 = X(d.band.from - 0.5), bx1 = X(d.band.to + 0.5);
      g.fillStyle = cssVar("--band");
      g.fillRect(bx0, Y(d.band.hi), bx1 - bx0, Y(d.band.lo) - Y(d.band.hi));
      g.strokeStyle = cssVar("--run"); g.setLineDash([4, 3]);
      g.beginPath(); g.moveTo(bx0, Y(d.band.ref)); g.lineTo(bx1, Y(d.band.ref)); g.stroke();
      g.setLineDash([]);
    }
    // change points
    g.strokeStyle = cssVar("--cp"); g.lineWidth = 2; g.setLineDash([6, 4]);
    d.cps.forEach(function (c) { if (c >= C.x0 && c <= C.x1) { var x = X(c - 0.5); g.beginPath(); g.moveTo(x, M.t); g.lineTo(x, M.t + ph); g.stroke(); } });
    g.setLineDash([]);
    // accepted changes: where the gate's window starts anew
    g.strokeStyle = cssVar("--acc");
    (d.acc || []).forEach(function (a) { if (a.x >= C.x0 && a.x <= C.x1) { var x = X(a.x - 0.5); g.beginPath(); g.moveTo(x, M.t); g.lineTo(x, M.t + ph); g.stroke(); } });
    g.lineWidth = 1;
    // hover line
    if (C.hover >= 0) { g.strokeStyle = muted; var hx = Math.round(X(C.hover)) + 0.5; g.beginPath(); g.moveTo(hx, M.t); g.lineTo(hx, M.t + ph); g.stroke(); }
    // runs: valid dots, invalid crosses, dirty squares
    // Many points: small squares, one per pixel they cover (a run on a
    // pixel already drawn adds nothing to see); few: round dots.
    var many = (i1 - i0) > 2000, seen = many ? new Uint8Array(Math.ceil(W) * Math.ceil(H)) : null;
    var drawn = 0, r = many ? 1.5 : 2.6, valid = new Path2D(), inv = new Path2D(), dirty = new Path2D();
    for (i = i0; i < i1; i++) {
      var x = X(runs.x[i]), y = Y(runs.y[i]);
      drawn++;
      if (runs.f[i] === 0) {
        if (many) {
          var px0 = x | 0, py0 = y | 0, cell = py0 * Math.ceil(W) + px0;
          if (px0 < 0 || py0 < 0 || px0 >= W || py0 >= H || seen[cell]) continue;
          seen[cell] = 1;
          valid.rect(x - r, y - r, 2 * r, 2 * r);
        } else { valid.moveTo(x + r, y); valid.arc(x, y, r, 0, 6.2832); }
      }
      else if (runs.f[i] === 1) { inv.moveTo(x - r - 1, y - r - 1); inv.lineTo(x + r + 1, y + r + 1); inv.moveTo(x + r + 1, y - r - 1); inv.lineTo(x - r - 1, y + r + 1); }
      else dirty.rect(x - r - 0.5, y - r - 0.5, 2 * r + 1, 2 * r + 1);
    }
    g.globalAlpha = 0.7; g.fillStyle = cssVar("--run"); g.fill(valid); g.globalAlpha = 1;
    g.lineWidth = 1.5; g.strokeStyle = cssVar("--inv"); g.stroke(inv);
    g.strokeStyle = cssVar("--dirty"); g.stroke(dirty);
    // median line
    var mx = d.med.x, m0 = Math.max(0, lowerBound(mx, C.x0) - 1), m1 = Math.min(mx.length, lowerBound(mx, C.x1) + 1);
    g.strokeStyle = cssVar("--med"); g.lineWidth = 1.5; g.beginPath();
    for (i = m0; i < m1; i++) { var px = X(mx[i]), py = Y(d.med.y[i]); if (i === m0) g.moveTo(px, py); else g.lineTo(px, py); }
    g.stroke();
    g.restore();
    g.strokeStyle = line; g.strokeRect(M.l + 0.5, M.t + 0.5, pw, ph);
    cv.dataset.points = String(drawn);
    cv.dataset.runs = String(runs.y.length);
    cv.dataset.view = C.x0.toFixed(2) + ":" + C.x1.toFixed(2);
    cv.dataset.renderMs = (performance.now() - started).toFixed(1);
  }
  // nearest measured commit to a canvas x
  function commitAt(px) {
    if (!C || !C.X || !C.xs.length) return -1;
    var c = C.x0 + ((px - M.l) / C.plot.pw) * (C.x1 - C.x0), k = lowerBound(C.xs, c), best = -1, bd = Infinity;
    [k - 1, k].forEach(function (j) { if (j >= 0 && j < C.xs.length) { var dd = Math.abs(C.X(C.xs[j]) - px); if (dd < bd) { bd = dd; best = C.xs[j]; } } });
    return bd <= 24 ? best : -1;
  }
  function showTip(c, px, py) {
    var tip = $("tip");
    if (c < 0) { tip.hidden = true; if (C && C.hover !== -1) { C.hover = -1; draw(); } return; }
    var d = C.d, k = lowerBound(d.med.x, c), med = d.med.x[k] === c ? d.med.y[k] : null, n = d.med.x[k] === c ? d.med.n[k] : 0;
    var bad = 0, dirty = 0, why = "";
    for (var i = lowerBound(d.runs.x, c); i < d.runs.x.length && d.runs.x[i] === c; i++) {
      if (d.runs.f[i] === 1) { bad++; why = d.runs.why[i] || why; } else if (d.runs.f[i] === 2) dirty++;
    }
    tip.textContent = "";
    var head = el("div");
    head.appendChild(el("span", { class: "sha" }, C.cm.sha[c].slice(0, 7)));
    head.appendChild(document.createTextNode(" " + new Date(C.cm.time[c] * 1000).toISOString().slice(0, 10)));
    tip.appendChild(head);
    tip.appendChild(el("div", { class: "subject" }, C.cm.subject[c]));
    tip.appendChild(el("div", {}, (med != null ? d.label + ": " + fmt(med) + (d.unit ? " " + d.unit : "") : "no valid run") + " \u00b7 N=" + n));
    if (bad) tip.appendChild(el("div", {}, bad + " invalid" + (why ? ": " + why : "")));
    if (dirty) tip.appendChild(el("div", {}, dirty + " dirty"));
    (d.acc || []).forEach(function (a) { if (a.x === c) tip.appendChild(el("div", { class: "acc" }, a.text)); });
    if (C.curve && C.curve.at[c]) tip.appendChild(el("div", {}, "click: its load curve"));
    tip.hidden = false;
    var pl = $("plot"), w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.max(0, Math.min(pl.clientWidth - w, px + 12)) + "px";
    tip.style.top = Math.max(0, Math.min(pl.clientHeight - h, py - h - 8)) + "px";
    if (C.hover !== c) { C.hover = c; draw(); }
  }
  function zoom(f, px) {
    if (!C) return;
    var at = px == null ? (C.x0 + C.x1) / 2 : C.x0 + ((px - M.l) / C.plot.pw) * (C.x1 - C.x0);
    var w = Math.max(4, Math.min(C.full[1] - C.full[0], (C.x1 - C.x0) * f));
    C.x0 = at - (at - C.x0) * (w / (C.x1 - C.x0)); C.x1 = C.x0 + w;
    clampView(); draw();
  }
  function pan(dx) {
    var w = C.x1 - C.x0; C.x0 += dx; C.x1 = C.x0 + w; clampView(); draw();
  }
  function clampView() {
    var w = C.x1 - C.x0;
    if (C.x0 < C.full[0]) { C.x0 = C.full[0]; C.x1 = C.x0 + w; }
    if (C.x1 > C.full[1]) { C.x1 = C.full[1]; C.x0 = C.x1 - w; }
  }
  function wireChart() {
    var cv = $("canvas"), drag = null;
    cv.addEventListener("wheel", function (e) { if (!C) return; e.preventDefault(); zoom(e.deltaY > 0 ? 1.25 : 0.8, e.offsetX); }, { passive: false });
    cv.addEventListener("pointerdown", function (e) {
      if (!C) return;
      // On a touch screen the first tap on a commit shows it, a second one opens it.
      drag = { x: e.offsetX, x0: C.x0, moved: false, shown: C.hover };
      cv.setPointerCapture(e.pointerId);
    });
    cv.addEventListener("pointermove", function (e) {
      if (!C) return;
      if (drag && Math.abs(e.offsetX - drag.x) > 3) {
        drag.moved = true;
        var w = C.x1 - C.x0, nx = drag.x0 - ((e.offsetX - drag.x) / C.plot.pw) * w;
        C.x0 = nx; C.x1 = nx + w; clampView(); draw();
        showTip(-1);
        return;
      }
      showTip(commitAt(e.offsetX), e.offsetX, e.offsetY);
    });
    cv.addEventListener("pointerup", function (e) {
      var d = drag; drag = null;
      if (!C || !d || d.moved) return;
      var c = commitAt(e.offsetX);
      if (e.pointerType === "touch" && c !== d.shown) { showTip(c, e.offsetX, e.offsetY); return; }
      if (c >= 0 && C.curve && C.curve.at[c]) {
        location.hash = "~curve/" + C.curve.id + "/" + C.cm.sha[c];
        return;
      }
      if (c >= 0 && C.forge && C.forge.kind) {
        var url = C.forge.repo + (C.forge.kind === "gitlab" ? "/-/commit/" : "/commit/") + C.cm.sha[c];
        window.open(url, "_blank", "noopener");
      }
    });
    cv.addEventListener("pointerleave", function () { showTip(-1); });
    cv.addEventListener("keydown", function (e) {
      if (!C) return;
      var w = C.x1 - C.x0;
      if (e.key === "ArrowLeft") pan(-w / 10); else if (e.key === "ArrowRight") pan(w / 10);
      else if (e.key === "+" || e.key === "=") zoom(0.8); else if (e.key === "-") zoom(1.25);
      else if (e.key === "0") { resetView(); draw(); } else return;
      e.preventDefault();
    });
    $("zin").addEventListener("click", function () { zoom(0.8); });
    $("zout").addEventListener("click", function () { zoom(1.25); });
    $("zreset").addEventListener("click", function () { resetView(); draw(); });
    window.addEventListener("resize", draw);
    if (window.matchMedia) matchMedia("(prefers-color-scheme: dark)").addEventListener("change", draw);
  }

  // ---- load curves ----
  // A sweep's curve at one commit (data/c/ID.js): latency against the
  // throughput each load achieved, beside the previous measured commit's,
  // with the SLO's bound as a line and the capacity at it as a mark. All
  // text from the history goes in through textContent or attributes.
  var K = null; // the curve shown: data, commits, selected entry, metric
  var SVGNS = "http://www.w3.org/2000/svg";
  function sv(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }
  function capText(c) {
    if (!c) return "not computed (no SLO for this benchmark, or a point lacks a latency it bounds)";
    if (c.status === "no swept point meets it") return "none: no swept point meets it (the lowest load is " + c.above + ")";
    if (c.status === "beyond the swept range") return "at least " + fmt(c.req) + " req/s (beyond the swept range: every point meets it)";
    if (c.status === "interpolated") return fmt(c.req) + " req/s (between loads " + c.below + " and " + c.above + ")";
    return fmt(c.req) + " req/s (at load " + c.below + ")";
  }
  function capChange(c, p) {
    if (!c || !p || !(p.req > 0) || c.status === "no swept point meets it") return null;
    return 100 * (c.req / p.req - 1);
  }
  function commitLabel(cm, x) {
    return cm.sha[x].slice(0, 7) + " " + new Date(cm.time[x] * 1000).toISOString().slice(0, 10) + " " + cm.subject[x];
  }
  function showCurve(id, sha) {
    $("overview").hidden = true;
    $("chart").hidden = true;
    $("curve").hidden = false;
    var data = /^[a-z0-9_.-]+$/.test(id) ? load("c/" + id) : Promise.reject(new Error("no load curve " + id));
    return Promise.all([data, load("commits")])
      .then(function (got) {
        $("home").textContent = got[1].title;
        addUp(got[1].up);
        openCurve(got[0], got[1], sha);
      })
      .catch(function (e) {
        $("ktitle").textContent = "No such load curve";
        $("ksub").textContent = String(e.message) + "; pick one from the overview.";
        K = null;
        $("kplot").textContent = "";
      });
  }
  function openCurve(d, cm, sha) {
    var i = d.at.length - 1;
    if (sha) for (var j = 0; j < d.at.length; j++) if (cm.sha[d.at[j].x].indexOf(sha) === 0) i = j;
    var metric = K && K.d.id === d.id ? K.metric : null;
    if (!metric || d.metrics.indexOf(metric) < 0) {
      var objs = ((d.slo || {}).obj || []).map(function (o) { return o.m; }).filter(function (m) { return d.metrics.indexOf(m) >= 0; });
      metric = objs[0] || (d.metrics.indexOf("mean_ttft_ms") >= 0 ? "mean_ttft_ms" : d.metrics[0]);
    }
    K = { d: d, cm: cm, i: i, metric: metric };
    document.title = d.bench + " \u2013 load curve by " + d.load;
    $("ktitle").textContent = d.bench + ": load curve by " + d.load;
    var sel = $("kcommit");
    sel.textContent = "";
    for (j = d.at.length - 1; j >= 0; j--) sel.appendChild(el("option", { value: String(j) }, commitLabel(cm, d.at[j].x)));
    var ms = $("kmetric");
    ms.textContent = "";
    d.metrics.forEach(function (m) { ms.appendChild(el("option", { value: m }, m)); });
    selectCurve(i);
  }
  function selectCurve(i) {
    var d = K.d, cm = K.cm;
    K.i = Math.max(0, Math.min(d.at.length - 1, i));
    var a = d.at[K.i], p = K.i > 0 ? d.at[K.i - 1] : null, sha = cm.sha[a.x];
    history.replaceState(null, "", "#~curve/" + d.id + "/" + sha);
    $("kcommit").value = String(K.i);
    $("kmetric").value = K.metric;
    $("kprev").disabled = K.i === 0;
    $("knext").disabled = K.i === d.at.length - 1;
    $("kheadname").textContent = "commit " + sha.slice(0, 7);
    $("kprevname").textContent = p ? "previous measured commit " + cm.sha[p.x].slice(0, 7) : "no earlier commit measured this curve";
    $("ksub").textContent = [labelText(d.labels).join(", ") || "no labels", d.testbed ? "testbed " + d.testbed : "",
      d.at.length + " commit" + (d.at.length === 1 ? "" : "s") + " measured it",
      d.slo ? "SLO " + d.slo.text : "no SLO in the rules file for this benchmark"].filter(Boolean).join(" \u00b7 ");
    var cap = $("kcap");
    cap.textContent = "";
    var f = cm.forge || {};
    if (f.kind) cap.appendChild(el("a", { href: f.repo + (f.kind === "gitlab" ? "/-/commit/" : "/commit/") + sha, rel: "noopener" }, sha.slice(0, 7)));
    else cap.appendChild(el("code", {}, sha.slice(0, 7)));
    cap.appendChild(document.createTextNode(" " + cm.subject[a.x]));
    cap.appendChild(document.createElement("br"));
    var chg = capChange(a.cap, p && p.cap);
    cap.appendChild(document.createTextNode("Capacity at SLO: " + capText(a.cap) +
      (p ? "; previous measured commit: " + capText(p.cap) : "") + (chg != null ? " (" + pct(chg) + ")" : "")));
    drawCurve();
    pointTable(a, p);
  }
  function series(e, mi) {
    var out = [];
    if (e) e.pts.forEach(function (q) { if (q.req > 0 && q.lat[mi] != null) out.push({ x: q.req, y: q.lat[mi], q: q }); });
    return out;
  }
  function drawCurve() {
    var d = K.d, a = d.at[K.i], p = K.i > 0 ? d.at[K.i - 1] : null, mi = d.metrics.indexOf(K.metric);
    var hs = series(a, mi), ps = series(p, mi);
    var obj = ((d.slo || {}).obj || []).filter(function (o) { return o.m === K.metric; })[0];
    var box = $("kplot");
    box.textContent = "";
    var W = Math.max(300, box.clientWidth || 800), H = 380, m = { l: 64, r: 16, t: 16, b: 46 }, pw = W - m.l - m.r, ph = H - m.t - m.b;
    var xmax = 0, ymax = 0;
    hs.concat(ps).forEach(function (s) { xmax = Math.max(xmax, s.x); ymax = Math.max(ymax, s.y); });
    [a.cap, p && p.cap].forEach(function (c) { if (c && c.req > 0) xmax = Math.max(xmax, c.req); });
    if (obj) ymax = Math.max(ymax, obj.v);
    xmax = xmax > 0 ? xmax * 1.06 : 1; ymax = ymax > 0 ? ymax * 1.08 : 1;
    var X = function (v) { return m.l + (v / xmax) * pw; }, Y = function (v) { return m.t + ph - (v / ymax) * ph; };
    var svg = sv("svg", { viewBox: "0 0 " + W + " " + H, role: "img", id: "ksvg",
      "aria-label": K.metric + " against achieved throughput, commit " + K.cm.sha[a.x].slice(0, 7) + (p ? " and the previous measured commit" : "") });
    niceTicks(0, ymax, 6).forEach(function (v) {
      svg.appendChild(sv("line", { class: "grid", x1: m.l, x2: m.l + pw, y1: Y(v), y2: Y(v) }));
      svg.appendChild(sv("text", { class: "tick", x: m.l - 6, y: Y(v) + 4, "text-anchor": "end" }, fmt(v)));
    });
    niceTicks(0, xmax, Math.max(3, Math.floor(pw / 90))).forEach(function (v) {
      svg.appendChild(sv("line", { class: "grid", x1: X(v), x2: X(v), y1: m.t, y2: m.t + ph }));
      svg.appendChild(sv("text", { class: "tick", x: X(v), y: m.t + ph + 16, "text-anchor": "middle" }, fmt(v)));
    });
    svg.appendChild(sv("rect", { class: "frame", x: m.l, y: m.t, width: pw, height: ph }));
    svg.appendChild(sv("text", { class: "axis", x: m.l + pw / 2, y: H - 8, "text-anchor": "middle" }, "achieved throughput (req/s)"));
    svg.appendChild(sv("text", { class: "axis", x: 14, y: m.t + ph / 2, "text-anchor": "middle", transform: "rotate(-90 14 " + (m.t + ph / 2) + ")" }, K.metric));
    if (obj) {
      svg.appendChild(sv("line", { class: "slo", x1: m.l, x2: m.l + pw, y1: Y(obj.v), y2: Y(obj.v), "data-limit": String(obj.v) }));
      svg.appendChild(sv("text", { class: "slo", x: m.l + 6, y: Y(obj.v) - 5 }, "SLO " + K.metric + " \u2264 " + fmt(obj.v)));
    }
    [[p, "cap prevcap"], [a, "cap headcap"]].forEach(function (e) {
      var c = e[0] && e[0].cap;
      if (!c || !(c.req > 0) || c.status === "no swept point meets it") return;
      var g = sv("g", { class: e[1], "data-req": String(c.req) });
      g.appendChild(sv("line", { class: e[1], x1: X(c.req), x2: X(c.req), y1: m.t, y2: m.t + ph }));
      if (e[0] === a) g.appendChild(sv("text", { class: "cap", x: X(c.req) - 4, y: m.t + 14, "text-anchor": "end" },
        (c.status === "beyond the swept range" ? "\u2265 " : "") + fmt(c.req) + " req/s"));
      else g.appendChild(sv("text", { class: "cap", x: X(c.req) + 4, y: m.t + ph - 6 }, "previous " + fmt(c.req) + " req/s"));
      g.appendChild(sv("title", {}, "capacity at SLO: " + capText(c)));
      svg.appendChild(g);
    });
    [[ps, "prev", p], [hs, "head", a]].forEach(function (e) {
      if (!e[0].length) return;
      var g = sv("g", { class: "series " + e[1], "data-points": String(e[0].length) });
      g.appendChild(sv("polyline", { class: "line " + e[1], points: e[0].map(function (s) { return X(s.x).toFixed(1) + "," + Y(s.y).toFixed(1); }).join(" ") }));
      e[0].forEach(function (s) {
        var c = sv("circle", { class: "pt " + e[1], cx: X(s.x).toFixed(1), cy: Y(s.y).toFixed(1), r: 4, "data-load": s.q.load });
        c.appendChild(sv("title", {}, K.cm.sha[e[2].x].slice(0, 7) + ", " + d.load + " " + s.q.load + ": " + fmt(s.x) + " req/s, " + K.metric + " " + fmt(s.y) +
          (s.q.sat ? " (saturated: under 90% of the configured rate achieved)" : "")));
        g.appendChild(c);
      });
      svg.appendChild(g);
    });
    svg.dataset.series = String((hs.length ? 1 : 0) + (ps.length ? 1 : 0));
    box.appendChild(svg);
  }
  function pointTable(a, p) {
    var d = K.d, mi = d.metrics.indexOf(K.metric), loads = [];
    (p ? p.pts : []).concat(a.pts).forEach(function (q) { if (loads.indexOf(q.load) < 0) loads.push(q.load); });
    var find = function (e, l) { return e ? e.pts.filter(function (q) { return q.load === l; })[0] : null; };
    var th = $("kpoints").tHead, tb = $("kpoints").tBodies[0];
    th.textContent = ""; tb.textContent = "";
    var hr = el("tr");
    [d.load, "previous req/s", "req/s", "previous " + K.metric, K.metric].forEach(function (h, i) { hr.appendChild(el("th", { scope: "col", class: i ? "num" : "" }, h)); });
    th.appendChild(hr);
    loads.forEach(function (l) {
      var qa = find(a, l), qp = find(p, l), tr = el("tr");
      tr.appendChild(el("td", {}, l));
      [qp && qp.req, qa && qa.req, qp && qp.lat[mi], qa && qa.lat[mi]].forEach(function (v) { tr.appendChild(el("td", { class: "num" }, fmt(v))); });
      tb.appendChild(tr);
    });
  }
  // curveOf finds the load curve a chart's series belongs to: the same
  // benchmark (guidellm's "constant@5.00" is curve "constant"), its labels
  // among the series', and for a capacity series the curve it was derived from.
  function curveOf(ix, d) {
    return (ix.curves || []).filter(function (c) {
      if (c.b !== d.bench && d.bench.indexOf(c.b + "@") !== 0) return false;
      if (d.labels.load_label != null && d.labels.load_label !== c.load) return false;
      if (d.labels.load_label == null && d.labels[c.load] == null) return false;
      return Object.keys(c.l).every(function (k) { return d.labels[k] === c.l[k]; });
    })[0];
  }
  function linkCurve(d) {
    var p = $("chartcurve");
    p.hidden = true; p.textContent = ""; $("curvehint").hidden = true;
    return load("index").then(function (ix) {
      var c = curveOf(ix, d);
      if (!c || !C || C.d !== d) return;
      return load("c/" + c.id).then(function (cd) {
        if (!C || C.d !== d) return;
        C.curve = { id: c.id, at: {} };
        cd.at.forEach(function (e) { C.curve.at[e.x] = true; });
        p.appendChild(el("a", { href: "#~curve/" + c.id, id: "curvelink" }, "Load curve by " + c.load + " at the latest commit"));
        p.appendChild(document.createTextNode(" (latency against achieved throughput, with the capacity at the SLO)"));
        p.hidden = false;
        $("curvehint").hidden = false;
      });
    }).catch(function () { /* no curve: the chart alone */ });
  }
  function wireCurve() {
    $("kcommit").addEventListener("change", function () { if (K) selectCurve(+$("kcommit").value); });
    $("kmetric").addEventListener("change", function () { if (K) { K.metric = $("kmetric").value; selectCurve(K.i); } });
    $("kprev").addEventListener("click", function () { if (K) selectCurve(K.i - 1); });
    $("knext").addEventListener("click", function () { if (K) selectCurve(K.i + 1); });
    window.addEventListener("resize", function () { if (K && !$("curve").hidden) drawCurve(); });
  }
  function buildCurves(ix) {
    var cs = ix.curves || [], tb = document.querySelector("#ctable tbody");
    $("curves").hidden = cs.length === 0;
    cs.forEach(function (c) {
      var tr = el("tr", { "data-curve": c.id }), name = el("td", { class: "name" });
      name.appendChild(el("a", { href: "#~curve/" + c.id }, c.b));
      name.appendChild(document.createElement("br"));
      labelText(c.l).forEach(function (t) { name.appendChild(el("span", { class: "chip" }, t)); });
      tr.appendChild(name);
      tr.appendChild(el("td", {}, c.load + " (" + c.pts + " loads)"));
      tr.appendChild(el("td", { class: "num", title: capText(c.cap) }, c.cap ? (c.cap.status === "no swept point meets it" ? "none" : (c.cap.status === "beyond the swept range" ? "\u2265 " : "") + fmt(c.cap.req) + " req/s") : "\u2013"));
      var chg = capChange(c.cap, c.prev);
      tr.appendChild(el("td", { class: "num " + worse(chg, "higher") }, pct(chg)));
      tr.appendChild(el("td", { class: "num" }, String(c.n)));
      tb.appendChild(tr);
    });
  }

  // ---- routing ----
  function route() {
    var h = location.hash.replace(/^#/, ""), cut = h.lastIndexOf("/");
    if (h.indexOf("~curve/") === 0) {
      var parts = h.split("/");
      try { return showCurve(decodeURIComponent(parts[1]), decodeURIComponent(parts[2] || "")); } catch (e) { /* a malformed escape: the overview */ }
    }
    if (cut > 0) {
      try { return showChart(decodeURIComponent(h.slice(0, cut)), decodeURIComponent(h.slice(cut + 1))); } catch (e) { /* a malformed escape: show the overview */ }
    }
    return showOverview();
  }
  $("filter").addEventListener("input", applyFilter);
  $("onlyflag").addEventListener("change", applyFilter);
  document.querySelectorAll("#table th button").forEach(function (b) { b.addEventListener("click", function () { sortBy(b.dataset.sort); }); });
  wireChart();
  wireCurve();
  window.addEventListener("hashchange", route);
  window.perfgateReady = route();
  // for tests and scripts: the shown chart's geometry
  window.perfgateChart = {
    xy: function (c) { if (!C || !C.X) return null; var k = lowerBound(C.d.med.x, c); return { x: C.X(c), y: C.d.med.x[k] === c ? C.Y(C.d.med.y[k]) : C.plot.ph / 2 }; },
    commits: function () { return C ? C.xs.slice() : []; },
    // the load curve shown: its commit and metric
    curve: function () { return K ? { id: K.d.id, sha: K.cm.sha[K.d.at[K.i].x], metric: K.metric } : null; }
  };
})();
